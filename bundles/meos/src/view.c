/* The MCP Apps view of the trajectory tools, and the tool that reads moving
 * points for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "view.h"

/* At most this many moving points in one view. */
#define VIEW_MAX_POINTS 8

/* view_tracks: each moving point of argument points (an object, name ->
 * value in any input form) as its MF-JSON and SRID, by name, for the view to
 * draw. */
static json_t *view_tracks(call_t *c, json_t *args)
{
    json_t *points = json_object_get(args, "points"), *out = mc_out(c), *tracks = json_array();
    json_object_set_new(out, "tracks", tracks);
    if (!json_is_object(points) || json_object_size(points) == 0 ||
        json_object_size(points) > VIEW_MAX_POINTS)
        return mc_fail("argument \"points\" must be an object of 1 to %d moving points",
                       VIEW_MAX_POINTS);
    /* By name: a client's encoder may order an object's members as it likes. */
    const char *names[VIEW_MAX_POINTS];
    size_t n = 0;
    const char *key;
    json_t *value;
    json_object_foreach(points, key, value) {
        size_t i = n++;
        for (; i > 0 && strcmp(names[i - 1], key) > 0; i--)
            names[i] = names[i - 1];
        names[i] = key;
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = names[i];
        json_t *err = NULL;
        Temporal *t = arg_point(c, points, name, &err);
        if (!t)
            return err;
        int32_t srid = tspatial_srid(t);
        char srs[32] = "";
        if (srid > 0)
            snprintf(srs, sizeof srs, "EPSG:%d", (int)srid);
        const char *text = mc_keep(c, temporal_as_mfjson(t, false, 0, 15, srid > 0 ? srs : NULL));
        json_t *mf = text ? json_loads(text, 0, NULL) : NULL;
        if (!mf || mc_failed()) {
            json_decref(mf);
            return mc_fail("cannot write %s as MF-JSON", name);
        }
        json_array_append_new(tracks, json_pack("{s:s, s:i, s:o}", "name", name, "srid", (json_int_t)srid,
                                                "mfjson", mf));
    }
    return mc_structured(c);
}

static json_t *dispatch(tn_call_t *call, json_t *args, void *user)
{
    (void)user;
    return mc_run(view_tracks, args, call);
}

char *view_meta(char *meta)
{
    json_t *m = meta ? json_loads(meta, 0, NULL) : NULL;
    free(meta);
    if (!m)
        return NULL;
    json_object_set_new(m, "ui", json_pack("{s:s}", "resourceUri", VIEW_URI));
    char *out = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    return out;
}

int view_register(tn_server_t *server)
{
    tn_error_t error;
    tn_view_t view = {
        .uri = VIEW_URI,
        .name = "trajectory",
        .title = "Moving points on a map",
        .description = "The paths of the moving points a tool was given, with a time slider.",
        .html = view_html,
        /* Nothing from the network: no connect, resource or frame domains. */
        .ui_meta = "{\"csp\":{},\"prefersBorder\":true}",
    };
    tn_tool_t tool = {
        .name = "view_tracks",
        .title = "Moving points for the trajectory view",
        .description = "The moving points of argument points (an object of name to moving point, "
                       "in any input form) as MF-JSON with their SRIDs: what the trajectory view "
                       "draws. Called by the view, not listed to the model.",
        .input_schema = "{\"type\":\"object\",\"properties\":{\"points\":{\"type\":\"object\","
                        "\"additionalProperties\":{\"type\":\"string\"},\"minProperties\":1,"
                        "\"maxProperties\":8}},\"required\":[\"points\"]}",
        .annotations = "{\"readOnlyHint\":true,\"openWorldHint\":false}",
        .handler = dispatch,
        .meta = NULL,
    };
    /* Visibility app: the view calls it, the model is not shown it. */
    char *meta = tool_meta("accessors", NULL, NULL);
    json_t *m = meta ? json_loads(meta, 0, NULL) : NULL;
    free(meta);
    meta = NULL;
    if (m && json_object_set_new(m, "ui", json_pack("{s:s, s:[s]}", "resourceUri", VIEW_URI,
                                                    "visibility", "app")) == 0)
        meta = json_dumps(m, JSON_COMPACT);
    json_decref(m);
    if (!meta) {
        fprintf(stderr, "meos-bundle: view: out of memory\n");
        return -1;
    }
    tool.meta = meta;
    int rc = tn_server_add_view(server, &view, &error) != 0 || tn_server_add_tool(server, &tool, &error) != 0;
    free(meta);
    if (rc) {
        fprintf(stderr, "meos-bundle: view: %s\n", error.text);
        return -1;
    }
    return 0;
}
