package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// jsonFieldNames returns the JSON key of every field of the struct types
// given (as their tags spell them).
func jsonFieldNames(types ...reflect.Type) map[string]bool {
	out := map[string]bool{}
	for _, t := range types {
		for i := range t.NumField() {
			if name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); name != "" && name != "-" {
				out[name] = true
			}
		}
	}
	return out
}

// jsonLevel is an object or array being walked by checkJSONKeys.
type jsonLevel struct {
	object bool
	keys   map[string]bool // keys seen in this object
	path   string          // where this object or array sits
	key    string          // the key whose value comes next
	index  int             // the array element that comes next
	expect bool            // in an object: the next token is a key or '}'
}

// valueDone records that the innermost open object or array got a value.
func valueDone(stack []jsonLevel) {
	if top := len(stack) - 1; top >= 0 {
		if stack[top].object {
			stack[top].expect = true
		} else {
			stack[top].index++
		}
	}
}

// checkJSONKeys walks the JSON document in data and rejects an object key
// that is not exactly (case included) one of allowed, and an object that
// repeats a key. encoding/json matches keys without regard to case and
// lets the last duplicate win, so "NE" would pass for "ne" and a second
// "ne" would silently replace the first. Syntax errors are left to the
// decoder that runs afterwards.
func checkJSONKeys(data []byte, allowed map[string]bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []jsonLevel
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil // end of input, or a syntax error the decoder reports
		}
		top := len(stack) - 1
		if top >= 0 && stack[top].object && stack[top].expect {
			key, ok := tok.(string)
			if !ok { // '}' closes the object, which was a value of its parent
				stack = stack[:top]
				valueDone(stack)
				continue
			}
			where := stack[top].path
			if where == "" {
				where = "top level"
			}
			if !allowed[key] {
				return fmt.Errorf("%s: unknown key %q (keys are case-sensitive)", where, key)
			}
			if stack[top].keys[key] {
				return fmt.Errorf("%s: key %q appears twice", where, key)
			}
			stack[top].keys[key] = true
			stack[top].key, stack[top].expect = key, false
			continue
		}
		if tok == json.Delim(']') {
			stack = stack[:top]
			valueDone(stack)
			continue
		}
		where := ""
		if top >= 0 {
			if stack[top].object {
				where = strings.TrimPrefix(stack[top].path+"."+stack[top].key, ".")
			} else {
				where = fmt.Sprintf("%s[%d]", stack[top].path, stack[top].index)
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, jsonLevel{object: true, keys: map[string]bool{}, path: where, expect: true})
		case json.Delim('['):
			stack = append(stack, jsonLevel{path: where})
		default:
			valueDone(stack)
		}
	}
}
