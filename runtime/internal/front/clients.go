package front

import "strings"

// How a client is shown the tools, by --names and the name it gives (clientInfo.name in
// initialize, or io.modelcontextprotocol/clientInfo in a stateless request's _meta).
//
// Under --names auto (the default) every client is shown names matching
// ^[a-zA-Z0-9_-]{1,64}$ (the underscore form: meos_tpoint_length, node-lamp_on), but for
// the few on dottedClients, known to take the canonical names as they are. A name a client
// does not give, or one the node does not know, gets the underscore form: a dotted name
// costs a strict host the server's whole toolset, an underscore name costs a lenient one
// nothing. Every client may call a tool by either form of its name (see canonicalName).
//
// A client that leaves the official Python SDK's default name, "mcp", has not named itself:
// it is a thin layer over the SDK in front of a model API (NVIDIA DataDesigner's MCP layer,
// and the many written like it). Such a layer reads one tools/list page, as the SDK's
// list_tools() does unless given a cursor, so it is also given every tool of its view in one
// page.

// dottedClients are the clientInfo names of the clients known to take dotted tool names,
// each with the evidence. A name is matched exactly: a host that renames itself leaves the
// list, and gets the underscore form, which every host takes.
var dottedClients = map[string]string{
	// Claude Code names each MCP tool mcp__<server>__<tool> for the model, replacing every
	// character the model API refuses with "_" itself; it lists and calls dotted names
	// (node-lamp.on) as served.
	"claude-code": "Claude Code",
	// toolnode's application libraries (sdk-go/app, sdk-python toolnode_sdk.app) map
	// names for each model API themselves (provider.MapNames) and show the user the
	// catalog's own names.
	"toolnode-app": "toolnode's application libraries",
	// toolnode's own CLI (toolnode call, toolnode tools against a remote node) speaks the
	// catalog's names, as the user types them.
	"toolnode-cli": "toolnode's CLI",
	// A toolnode running another as a bundle (its clientInfo name is "toolnode") merges the
	// names into its own catalog and renders them for its own clients.
	"toolnode": "toolnode, fronting another node",
}

// Clients known to refuse dotted names, for the record (they get the underscore form as
// every client not on dottedClients does): Claude Desktop and claude.ai ("claude-ai")
// check every name against ^[a-zA-Z0-9_-]{1,64}$ and withhold the server's whole toolset
// when one fails; GitHub Copilot CLI and Windsurf accept only that pattern; VS Code
// ("Visual Studio Code") and Cursor ("cursor-vscode") hand names to the model APIs, which
// refuse dots; the agent frameworks (openai-agents, langchain-mcp-adapters, pydantic-ai,
// fastmcp's client as "fastmcp" since 4.2 and "mcp" before, mcp-use) pass MCP names to the
// model APIs unchanged.

// dottedClient reports whether a client, by the name it gives, is known to take dotted
// tool names.
func dottedClient(name string) bool {
	_, ok := dottedClients[name]
	return ok
}

// selectingClients are the clients that pick the tools they give a model themselves, from
// the whole list: the auto view lists them every tool. toolnode's application libraries
// and CLI (toolnode tools) select by the --allow patterns their user gives, and render each
// model API's request; a node fronting another merges the whole catalog into its own, and
// applies its own view.
var selectingClients = map[string]bool{"toolnode-app": true, "toolnode-cli": true, "toolnode": true}

// selectingClient reports whether a client, by the name it gives, picks tools itself.
func selectingClient(name string) bool { return selectingClients[strings.TrimSpace(name)] }

// pythonSDKDefaultName is the clientInfo.name of the official Python SDK's ClientSession
// when its caller gives none.
const pythonSDKDefaultName = "mcp"

// thinClient reports whether a client, by the name it gives, has not named itself.
func thinClient(name string) bool { return name == pythonSDKDefaultName }

// namesFor returns how a client is shown the tools under the --names mode: strict (the
// underscore form) and whole (every tool of its view in one tools/list page).
func namesFor(mode, clientName string) (strict, whole bool) {
	whole = thinClient(clientName)
	switch mode {
	case NamesStrict:
		return true, whole
	case NamesCanonical:
		return false, whole
	}
	return !dottedClient(strings.TrimSpace(clientName)), whole
}
