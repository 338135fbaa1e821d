/* The MCP Apps view of the trajectory tools: a self-contained HTML page that
 * draws moving points as SVG with a time slider. */
#ifndef MEOS_VIEW_H
#define MEOS_VIEW_H

#include <tn.h>

/* The view's URI, which the trajectory tools name in _meta.ui.resourceUri. */
#define VIEW_URI "ui://meos/trajectory.html"

/* The view's HTML (view_html.c). */
extern const char view_html[];

/* Adds the view and view_tracks, the tool only the view calls (visibility
 * app), which reads moving points for it. 0 or -1. */
int view_register(tn_server_t *server);

/* Returns meta (a tool's _meta as JSON text, taken over) with
 * ui.resourceUri naming the view, as a new malloc'd string; NULL when meta
 * is NULL or memory runs out. */
char *view_meta(char *meta);

#endif
