package bundle

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/toolnode/toolnode/sdk-go/mcp"
)

// PromptHandler answers one prompts/get. The required arguments are present in r. An
// *RPCError it returns is answered as it is; any other error answers -32603 with its
// message.
type PromptHandler func(ctx context.Context, r *PromptRequest) (*mcp.GetPromptResult, error)

// PromptRequest is one prompts/get as its handler sees it.
type PromptRequest struct {
	// Name is the prompt's name.
	Name string
	// Arguments are the values the client gave, by argument name; never nil.
	Arguments map[string]string

	// Input asks the client for input on behalf of the request.
	*Input
}

type prompt struct {
	def      mcp.Prompt
	handler  PromptHandler
	complete map[string]Completer // by argument name
}

// AddPrompt offers p, answered by h. It fails when the name is empty or taken, or an
// argument has no name or the name of another. Prompts are listed in the order added;
// once there is one, the server announces the prompts capability.
func (s *Server) AddPrompt(p mcp.Prompt, h PromptHandler) error {
	if p.Name == "" {
		return fmt.Errorf("bundle: a prompt needs a name")
	}
	if h == nil {
		return fmt.Errorf("bundle: prompt %q has no handler", p.Name)
	}
	var names []string
	for _, a := range p.Arguments {
		if a.Name == "" || slices.Contains(names, a.Name) {
			return fmt.Errorf("bundle: prompt %q: argument names must be set and distinct, got %q", p.Name, a.Name)
		}
		names = append(names, a.Name)
	}
	def, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("bundle: prompt %q: %w", p.Name, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.prompts[p.Name]; dup {
		return fmt.Errorf("bundle: prompt %q is already added", p.Name)
	}
	s.prompts[p.Name] = &prompt{def: p, handler: h, complete: map[string]Completer{}}
	s.listed[listPrompts] = append(s.listed[listPrompts], def)
	return nil
}

func (s *Server) prompt(name string) *prompt {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.prompts[name]
}

// getPrompt answers prompts/get.
func (ss *session) getPrompt(ctx context.Context, id, params json.RawMessage, e era) (any, *RPCError) {
	var p mcp.GetPromptParams
	if err := decodeParams(params, &p); err != nil {
		return nil, err
	}
	pr := ss.s.prompt(p.Name)
	if pr == nil {
		return nil, errorf(mcp.CodeInvalidParams, "unknown prompt %q", p.Name)
	}
	if p.Arguments == nil {
		p.Arguments = map[string]string{}
	}
	for _, a := range pr.def.Arguments {
		if _, ok := p.Arguments[a.Name]; a.Required && !ok {
			return nil, errorf(mcp.CodeInvalidParams, "prompt %q: missing required argument %q", p.Name, a.Name)
		}
	}
	args, _ := json.Marshal(p.Arguments)
	in, rerr := ss.newInput(id, e, params, mcp.MethodPromptsGet, p.Name, args)
	if rerr != nil {
		return nil, rerr
	}
	res, err := protect(ss.log, fmt.Sprintf("prompt %q", p.Name), func() (*mcp.GetPromptResult, error) {
		return pr.handler(ctx, &PromptRequest{Name: p.Name, Arguments: p.Arguments, Input: in})
	})
	if err != nil {
		return in.finish(nil, toRPCError(err))
	}
	if res == nil {
		res = &mcp.GetPromptResult{}
	}
	if res.Messages == nil {
		// messages is required on the wire even when empty.
		r := *res
		r.Messages = []mcp.PromptMessage{}
		res = &r
	}
	return in.finish(res, nil)
}
