package front

// How a client is shown the tools, by --names and the name it gives (clientInfo.name in
// initialize, or io.modelcontextprotocol/clientInfo in a stateless request's _meta).
//
// A client that leaves the official Python SDK's default name, "mcp", has not named itself:
// it is a thin layer over the SDK in front of a model API (NVIDIA DataDesigner's MCP layer,
// and the many written like it). Such a layer reads one tools/list page, as the SDK's
// list_tools() does unless given a cursor, and hands the names to the model API as they
// come. Under --names auto it is therefore given every tool in one page, and names the model
// APIs accept (the underscore form). Clients that name themselves keep what they had:
// canonical names, pages of --page-size. Every client may call a tool by either form of its
// name (see canonicalName), so a client that maps names itself keeps working too.

// pythonSDKDefaultName is the clientInfo.name of the official Python SDK's ClientSession
// when its caller gives none.
const pythonSDKDefaultName = "mcp"

// thinClient reports whether a client, by the name it gives, has not named itself.
func thinClient(name string) bool { return name == pythonSDKDefaultName }

// namesFor returns how a client is shown the tools under the --names mode: strict (the
// underscore form) and whole (every tool in one tools/list page).
func namesFor(mode, clientName string) (strict, whole bool) {
	switch mode {
	case NamesStrict:
		return true, false
	case NamesCanonical:
		return false, false
	}
	thin := thinClient(clientName)
	return thin || strictClient(clientName), thin
}
