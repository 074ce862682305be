package runtime

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// JSONFieldNames numbers the JSON keys of the fields of the struct types
// given (as their tags spell them), at most 64 of them: the allowed set
// for CheckJSONKeys.
func JSONFieldNames(types ...reflect.Type) map[string]int {
	out := map[string]int{}
	for _, t := range types {
		for i := range t.NumField() {
			name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
			if _, dup := out[name]; !dup && name != "" && name != "-" && len(out) < 64 {
				out[name] = len(out)
			}
		}
	}
	return out
}

// jsonLevel is an object or array open during CheckJSONKeys' scan.
type jsonLevel struct {
	object  bool
	wantKey bool   // in an object: a string now is a key
	key     int    // the last key read
	seen    uint64 // keys read in this object, one bit per allowed key
	index   int    // in an array: the element being read
}

// jsonEnd marks the bytes that end a number or literal.
var jsonEnd = [256]bool{',': true, '}': true, ']': true, ' ': true, '\t': true, '\n': true, '\r': true}

// CheckJSONKeys scans the JSON document in data and rejects an object key
// that is not exactly (case included, after unescaping) one of allowed,
// and an object that repeats a key. encoding/json matches keys without
// regard to case and lets the last duplicate win, so "NE" would pass for
// "ne" and a second "ne" would silently replace the first. The scan only
// follows the structure; syntax errors are left to the decoder that runs
// afterwards (the scan stops quietly where it cannot go on).
func CheckJSONKeys(data []byte, allowed map[string]int) error {
	var stack []jsonLevel
	where := func() string {
		names := make([]string, len(allowed))
		for k, v := range allowed {
			names[v] = k
		}
		var b strings.Builder
		for k, l := range stack[:len(stack)-1] {
			if l.object {
				if k > 0 {
					b.WriteByte('.')
				}
				b.WriteString(names[l.key])
			} else {
				fmt.Fprintf(&b, "[%d]", l.index)
			}
		}
		if b.Len() == 0 {
			return "top level"
		}
		return b.String()
	}
	for i := 0; i < len(data); {
		switch data[i] {
		case ' ', '\t', '\n', '\r', ':':
			i++
		case '{':
			stack = append(stack, jsonLevel{object: true, wantKey: true})
			i++
		case '[':
			stack = append(stack, jsonLevel{})
			i++
		case '}', ']':
			if len(stack) == 0 {
				return nil
			}
			stack = stack[:len(stack)-1]
			i++
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].wantKey = true
				} else {
					stack[n-1].index++
				}
			}
			i++
		case '"':
			end, escaped := i+1, false
			for end < len(data) && data[end] != '"' {
				if data[end] == '\\' {
					escaped = true
					end++
				}
				end++
			}
			if end >= len(data) {
				return nil // unterminated: the decoder says so
			}
			if n := len(stack); n > 0 && stack[n-1].object && stack[n-1].wantKey {
				raw := data[i : end+1]
				k, ok := allowed[string(raw[1:len(raw)-1])]
				if escaped {
					var key string
					if err := json.Unmarshal(raw, &key); err != nil {
						return nil
					}
					k, ok = allowed[key]
				}
				top := &stack[n-1]
				if !ok {
					return fmt.Errorf("%s: unknown key %s (keys are case-sensitive)", where(), raw)
				}
				if top.seen&(1<<k) != 0 {
					return fmt.Errorf("%s: key %s appears twice", where(), raw)
				}
				top.seen |= 1 << k
				top.key, top.wantKey = k, false
			}
			i = end + 1
		default: // a number, true, false or null
			for i < len(data) && !jsonEnd[data[i]] {
				i++
			}
		}
	}
	return nil
}
