module github.com/gogml/gogml

go 1.26
