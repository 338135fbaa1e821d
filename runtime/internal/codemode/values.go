package codemode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/toolnode/toolnode/sdk-go/rawjson"
)

// Values between JSON and Starlark: results come in as Starlark values (objects as dicts
// in their order, integers as ints of any size, other numbers as floats), and what a
// program sends or answers goes out as JSON, within a budget of bytes and a depth.

// maxDepth bounds the nesting of what a program sends or answers: a list may hold itself.
const maxDepth = 100

// errTooLarge is the error of a value that does not fit its budget.
var errTooLarge = errors.New("too large")

// fromJSON reads one JSON value as a Starlark value.
func fromJSON(data []byte) (starlark.Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, fmt.Errorf("read a result: %w", err)
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (starlark.Value, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			d := starlark.NewDict(0)
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if err := d.SetKey(starlark.String(k.(string)), v); err != nil {
					return nil, err
				}
			}
			_, err := dec.Token()
			return d, err
		case '[':
			var elems []starlark.Value
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				elems = append(elems, v)
			}
			_, err := dec.Token()
			return starlark.NewList(elems), err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return starlark.String(t), nil
	case bool:
		return starlark.Bool(t), nil
	case nil:
		return starlark.None, nil
	case json.Number:
		if !strings.ContainsAny(string(t), ".eE") {
			if i, ok := new(big.Int).SetString(string(t), 10); ok {
				return starlark.MakeBigInt(i), nil
			}
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, err
		}
		return starlark.Float(f), nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// encoder writes Starlark values as JSON within a budget of bytes.
type encoder struct {
	buf    []byte
	budget int64
}

// toJSON writes v as JSON, in at most budget bytes.
func toJSON(v starlark.Value, budget int64) (json.RawMessage, error) {
	e := &encoder{budget: budget}
	if err := e.value(v, 0); err != nil {
		return nil, err
	}
	return e.buf, nil
}

func (e *encoder) write(b ...byte) error {
	if int64(len(e.buf)+len(b)) > e.budget {
		return errTooLarge
	}
	e.buf = append(e.buf, b...)
	return nil
}

func (e *encoder) value(v starlark.Value, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested more than %d deep", maxDepth)
	}
	switch v := v.(type) {
	case starlark.NoneType:
		return e.write([]byte("null")...)
	case starlark.Bool:
		return e.write(strconv.AppendBool(nil, bool(v))...)
	case starlark.Int:
		return e.write([]byte(v.String())...)
	case starlark.Float:
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%v is no JSON number", v)
		}
		return e.write(strconv.AppendFloat(nil, f, 'g', -1, 64)...)
	case starlark.String:
		return e.write(rawjson.AppendString(nil, string(v))...)
	case starlark.Bytes:
		return e.write(rawjson.AppendString(nil, string(v))...)
	case *starlark.Dict:
		if err := e.write('{'); err != nil {
			return err
		}
		for i, item := range v.Items() {
			k, ok := item[0].(starlark.String)
			if !ok {
				return fmt.Errorf("a dict key is a %s; JSON keys are strings", item[0].Type())
			}
			if i > 0 {
				if err := e.write(','); err != nil {
					return err
				}
			}
			if err := e.write(append(rawjson.AppendString(nil, string(k)), ':')...); err != nil {
				return err
			}
			if err := e.value(item[1], depth+1); err != nil {
				return err
			}
		}
		return e.write('}')
	case *toolError:
		return e.write(v.json()...)
	case starlark.Iterable:
		switch v.(type) {
		case *starlark.List, starlark.Tuple, *starlark.Set:
		default:
			return fmt.Errorf("a %s is no JSON value", v.Type())
		}
		if err := e.write('['); err != nil {
			return err
		}
		it := v.Iterate()
		defer it.Done()
		var x starlark.Value
		for i := 0; it.Next(&x); i++ {
			if i > 0 {
				if err := e.write(','); err != nil {
					return err
				}
			}
			if err := e.value(x, depth+1); err != nil {
				return err
			}
		}
		return e.write(']')
	}
	return fmt.Errorf("a %s is no JSON value", v.Type())
}

// literal reads an expression of a program's text that is a literal JSON value: strings,
// numbers, True, False, None, and lists, tuples and dicts (string keys) of them. ok is
// false for anything else, which only running the program tells.
func literal(x syntax.Expr) (v any, ok bool) {
	switch x := x.(type) {
	case *syntax.Literal:
		switch val := x.Value.(type) {
		case string:
			if x.Token == syntax.STRING {
				return val, true
			}
		case int64:
			return val, true
		case *big.Int:
			return json.Number(val.String()), true
		case float64:
			return val, true
		}
	case *syntax.Ident:
		switch x.Name {
		case "True":
			return true, universal(x)
		case "False":
			return false, universal(x)
		case "None":
			return nil, universal(x)
		}
	case *syntax.UnaryExpr:
		if x.Op == syntax.MINUS {
			if lit, ok := x.X.(*syntax.Literal); ok {
				switch val := lit.Value.(type) {
				case int64:
					return -val, true
				case float64:
					return -val, true
				}
			}
		}
	case *syntax.ParenExpr:
		return literal(x.X)
	case *syntax.ListExpr:
		return literalList(x.List)
	case *syntax.TupleExpr:
		return literalList(x.List)
	case *syntax.DictExpr:
		m := map[string]any{}
		for _, e := range x.List {
			entry := e.(*syntax.DictEntry)
			k, ok := literal(entry.Key)
			ks, isString := k.(string)
			if !ok || !isString {
				return nil, false
			}
			val, ok := literal(entry.Value)
			if !ok {
				return nil, false
			}
			m[ks] = val
		}
		return m, true
	}
	return nil, false
}

func literalList(xs []syntax.Expr) (any, bool) {
	out := make([]any, 0, len(xs))
	for _, x := range xs {
		v, ok := literal(x)
		if !ok {
			return nil, false
		}
		out = append(out, v)
	}
	return out, true
}
