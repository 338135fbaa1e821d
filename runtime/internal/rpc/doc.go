// Package rpc is the node's message engine: every JSON-RPC message between a client and the
// node, or between the node and a bundle, is read, checked, matched and written here.
//
// It has one envelope (Message, whose params and results stay raw JSON), one table of calls
// waiting for answers (Pending, which hands each answer to a callback on the goroutine that
// read it), one error type (Error, compared by code with errors.Is) and one way out to a
// peer (Outbox, whose Send never blocks and refuses past a bound). Conn puts them together
// for a newline-delimited stream such as a bundle's stdin and stdout or the stdio front.
//
// What the engine guarantees, so that callers need not remember it:
//   - every message is checked before anyone acts on it (Parse): valid UTF-8 and no lone
//     surrogate escapes, nesting bounded, no duplicate member names at any depth, ids that
//     are integers or strings, the JSON-RPC 2.0 shape; what fails gets the code the spec
//     names and never reaches the other side;
//   - writes never wait for a peer: a slow or stuck reader fills its own Outbox, bounded,
//     and only its own sends are refused;
//   - an answer is taken from Pending at most once: a second answer to the same id, an
//     answer to an id never sent and an answer to a call given up on are dropped at once,
//     payload and all;
//   - a call's end is reported exactly once, by its answer, by giving up, or by the
//     connection ending.
//
// github.com/sourcegraph/jsonrpc2 is the project's JSON-RPC library, and the engine's Error
// is its Error object. Its Conn is not used to move messages: it decodes every request's
// params into a map and every result into an interface{} before handing them over as raw
// JSON (for a relay that only passes payloads on, most of the work per message, and seconds
// for a 10 MiB result), hands every answer through a channel to a goroutine waiting for it
// (a relay's answer is better written on by the goroutine that read it), writes under one
// mutex that a peer which stops reading holds forever, and takes only unsigned integers and
// strings as ids. Those four properties are exactly the ones a gateway cannot have.
package rpc
