package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// Completer suggests values for a prompt argument or a template variable (completion/complete)
// given what the user has typed so far, value, and the values of the other arguments
// already resolved, args (never nil). Only the first mcp.MaxCompletionValues are sent,
// with the total count.
type Completer func(ctx context.Context, value string, args map[string]string) ([]string, error)

// CompleteFrom returns a Completer suggesting those of values that start with what was
// typed, in their order.
func CompleteFrom(values ...string) Completer {
	return func(_ context.Context, typed string, _ map[string]string) ([]string, error) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, typed) {
				out = append(out, v)
			}
		}
		return out, nil
	}
}

// CompletePromptArgument completes the argument arg of the prompt named prompt with c. The
// prompt must have been added and have that argument. Once there is a completer, the server
// announces the completions capability.
func (s *Server) CompletePromptArgument(prompt, arg string, c Completer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.prompts[prompt]
	if p == nil {
		return fmt.Errorf("bundle: no prompt %q to complete", prompt)
	}
	if !slices.ContainsFunc(p.def.Arguments, func(a mcp.PromptArgument) bool { return a.Name == arg }) {
		return fmt.Errorf("bundle: prompt %q has no argument %q", prompt, arg)
	}
	return s.setCompleter(p.complete, arg, c)
}

// CompleteTemplateVariable completes the variable of the resource template uriTemplate
// with c. The template must have been added and hold that variable.
func (s *Server) CompleteTemplateVariable(uriTemplate, variable string, c Completer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.templates, func(t *template) bool { return t.def.URITemplate == uriTemplate })
	if i < 0 {
		return fmt.Errorf("bundle: no resource template %q to complete", uriTemplate)
	}
	t := s.templates[i]
	if !slices.Contains(t.vars, variable) {
		return fmt.Errorf("bundle: resource template %q has no variable %q", uriTemplate, variable)
	}
	return s.setCompleter(t.complete, variable, c)
}

func (s *Server) setCompleter(m map[string]Completer, name string, c Completer) error {
	if c == nil {
		return fmt.Errorf("bundle: completer for %q is nil", name)
	}
	if m[name] == nil {
		s.completers++
	}
	m[name] = c
	return nil
}

// completer finds the completer of what a completion/complete refers to; nil, without
// error, when the argument has none.
func (s *Server) completer(ref mcp.CompleteRef, arg string) (Completer, *RPCError) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	switch ref.Type {
	case mcp.RefPrompt:
		if p := s.prompts[ref.Name]; p != nil {
			return p.complete[arg], nil
		}
		return nil, errorf(mcp.CodeInvalidParams, "unknown prompt %q", ref.Name)
	case mcp.RefResource:
		for _, t := range s.templates {
			if t.def.URITemplate == ref.URI {
				return t.complete[arg], nil
			}
		}
		if s.resources[ref.URI] != nil {
			return nil, nil // a plain resource has nothing to complete
		}
		return nil, errorf(mcp.CodeInvalidParams, "unknown resource template %q", ref.URI)
	}
	return nil, errorf(mcp.CodeInvalidParams, "unknown completion reference type %q", ref.Type)
}

// complete answers completion/complete.
func (ss *session) complete(ctx context.Context, params json.RawMessage) (any, *RPCError) {
	var p mcp.CompleteParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	c, rerr := ss.s.completer(p.Ref, p.Argument.Name)
	if rerr != nil {
		return nil, rerr
	}
	res := mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
	if c == nil {
		return res, nil
	}
	args := map[string]string{}
	if p.Context != nil && p.Context.Arguments != nil {
		args = p.Context.Arguments
	}
	values, err := protect(ss.log, fmt.Sprintf("completer of %q", p.Argument.Name), func() ([]string, error) {
		return c(ctx, p.Argument.Value, args)
	})
	if err != nil {
		return nil, toRPCError(err)
	}
	if len(values) > mcp.MaxCompletionValues {
		total := len(values)
		res.Completion.Total, res.Completion.HasMore = &total, true
		values = values[:mcp.MaxCompletionValues]
	}
	res.Completion.Values = append(res.Completion.Values, values...)
	return res, nil
}

func (s *Server) hasCompleters() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.completers > 0
}
