package mcp

// MCP's skills extension (SEP-2640): servers publish Agent Skills, each a folder of files
// with a SKILL.md, as skill:// resources, listed with their digests by skills/list and
// skills/get.
const (
	// ExtensionSkills names the skills extension in capabilities.extensions.
	ExtensionSkills = "io.modelcontextprotocol/skills"
	// MethodSkillsList lists the skills a server serves (paginated, field "skills").
	MethodSkillsList = "skills/list"
	// MethodSkillsGet gives the entry of one skill by the URI of its SKILL.md (params
	// "uri", result "skill"); an unknown skill is CodeInvalidParams.
	MethodSkillsGet = "skills/get"
)
