package mcp

// Completion reference types.
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// MaxCompletionValues is the most values one completion/complete answer may hold.
const MaxCompletionValues = 100

// CompleteParams is the params of completion/complete.
type CompleteParams struct {
	Ref      CompleteRef      `json:"ref"`
	Argument CompleteArgument `json:"argument"`
	Context  *CompleteContext `json:"context,omitempty"`
}

// CompleteRef names what is completed: a prompt (Type RefPrompt, Name) or a resource
// template (Type RefResource, URI holding the template).
type CompleteRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompleteArgument is the argument being completed and what has been typed so far.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext holds the arguments already resolved (2025-06-18 and later).
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult answers completion/complete.
type CompleteResult struct {
	Completion Completion `json:"completion"`
}

// Completion is at most MaxCompletionValues suggestions, with the total when more exist.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int     `json:"total,omitempty"`
	HasMore bool     `json:"hasMore,omitempty"`
}
