package mcp

// Method names used by toolnode.
const (
	MethodInitialize        = "initialize"
	MethodPing              = "ping"
	MethodToolsList         = "tools/list"
	MethodToolsCall         = "tools/call"
	MethodLoggingSetLevel   = "logging/setLevel"
	MethodResourcesList     = "resources/list"
	MethodResourceTemplates = "resources/templates/list"
	MethodResourcesRead     = "resources/read"
	MethodResourcesSub      = "resources/subscribe"
	MethodResourcesUnsub    = "resources/unsubscribe"
	MethodPromptsList       = "prompts/list"
	MethodPromptsGet        = "prompts/get"
	MethodComplete          = "completion/complete"
	MethodSampling          = "sampling/createMessage"
	MethodElicitation       = "elicitation/create"
	MethodRootsList         = "roots/list"

	NotifyInitialized        = "notifications/initialized"
	NotifyCancelled          = "notifications/cancelled"
	NotifyProgress           = "notifications/progress"
	NotifyMessage            = "notifications/message"
	NotifyToolsListChanged   = "notifications/tools/list_changed"
	NotifyResourcesChanged   = "notifications/resources/list_changed"
	NotifyResourceUpdated    = "notifications/resources/updated"
	NotifyPromptsListChanged = "notifications/prompts/list_changed"
	NotifyRootsListChanged   = "notifications/roots/list_changed"
)
