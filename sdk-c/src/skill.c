/* Skills of MCP's skills extension (SEP-2640): an Agent Skill read from a
 * folder, its entry (the SKILL.md frontmatter as JSON, each file's sha256
 * digest and size) for skills/list and skills/get, and its files as
 * skill:// resources. */
#include "tn_private.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The extension's limits of one skill. */
#define MAX_FILES 512
#define MAX_BYTES (16L << 20)

/* One file of a skill, read: its path relative to the skill's folder. */
struct skill_file {
    char *rel;
    char *data;
    size_t size;
};

struct skill_files {
    struct skill_file *items;
    size_t count, capacity, total;
};

/* What a skill file's resource reads: its URI, bytes and media type. */
struct skill_read {
    char *uri;
    char *data;
    size_t size;
    const char *mime;
};

static void files_free(struct skill_files *f)
{
    for (size_t i = 0; i < f->count; i++) {
        free(f->items[i].rel);
        free(f->items[i].data);
    }
    free(f->items);
}

/* Reads the file at path into *data (NUL-terminated); -1 on failure. */
static int read_all(const char *path, char **data, size_t *size)
{
    FILE *in = fopen(path, "rb");
    if (!in)
        return -1;
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap + 1);
    while (buf) {
        n += fread(buf + n, 1, cap - n, in);
        if (n < cap)
            break;
        char *grown = cap > (size_t)MAX_BYTES ? NULL : realloc(buf, 2 * cap + 1);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    int failed = !buf || ferror(in);
    fclose(in);
    if (failed) {
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *size = n;
    return 0;
}

/* Adds every regular file under dir/rel (hidden ones and links left out). */
static int walk(const char *dir, const char *rel, struct skill_files *f,
                tn_error_t *error)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s%s%s", dir, *rel ? "/" : "", rel) >= (int)sizeof path) {
        tn__set_error(error, "skill folder %s: a path too long", dir);
        return -1;
    }
    DIR *d = opendir(path);
    if (!d) {
        tn__set_error(error, "skill folder %s: %s", path, strerror(errno));
        return -1;
    }
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096], full[8192];
        if (snprintf(child, sizeof child, "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof child ||
            snprintf(full, sizeof full, "%s/%s", dir, child) >= (int)sizeof full) {
            tn__set_error(error, "skill folder %s: a path too long", dir);
            rc = -1;
            break;
        }
        struct stat st;
        if (lstat(full, &st) != 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            rc = walk(dir, child, f, error);
            continue;
        }
        if (!S_ISREG(st.st_mode))
            continue;
        if (f->count == MAX_FILES) {
            tn__set_error(error, "skill folder %s: more than %d files", dir, MAX_FILES);
            rc = -1;
            break;
        }
        if (f->count == f->capacity) {
            size_t cap = f->capacity ? 2 * f->capacity : 16;
            struct skill_file *items = realloc(f->items, cap * sizeof *items);
            if (!items) {
                tn__set_error(error, "out of memory");
                rc = -1;
                break;
            }
            f->items = items;
            f->capacity = cap;
        }
        struct skill_file *sf = &f->items[f->count];
        if (read_all(full, &sf->data, &sf->size) != 0) {
            tn__set_error(error, "skill file %s: cannot read it", full);
            rc = -1;
            break;
        }
        sf->rel = strdup(child);
        f->count++;
        f->total += sf->size;
        if (!sf->rel || f->total > (size_t)MAX_BYTES) {
            tn__set_error(error, "skill folder %s: past 16 MiB, or out of memory", dir);
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

static int by_rel(const void *a, const void *b)
{
    return strcmp(((const struct skill_file *)a)->rel,
                  ((const struct skill_file *)b)->rel);
}

/* Whether name is an Agent Skills name: lowercase letters, digits and
 * single hyphens inside, 1 to 64 characters. */
static int skill_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > 64 || name[0] == '-' || name[n - 1] == '-')
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-') ||
            (c == '-' && name[i + 1] == '-'))
            return 0;
    }
    return 1;
}

/* A YAML scalar as YAML reads it: quoted strings, true, false, null,
 * numbers, else the text. */
static json_t *scalar(const char *v, size_t n)
{
    if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
        char *text = malloc(n + 3);
        if (!text)
            return NULL;
        snprintf(text, n + 3, "[%.*s]", (int)n, v);
        json_t *arr = json_loads(text, 0, NULL);
        free(text);
        json_t *s = json_incref(json_array_get(arr, 0));
        json_decref(arr);
        return s;
    }
    if (n >= 2 && v[0] == '\'' && v[n - 1] == '\'') {
        char *out = malloc(n);
        size_t k = 0;
        for (size_t i = 1; out && i + 1 < n; i++) {
            out[k++] = v[i];
            if (v[i] == '\'' && v[i + 1] == '\'')
                i++;
        }
        json_t *s = out ? json_stringn(out, k) : NULL;
        free(out);
        return s;
    }
    if (n == 4 && !strncmp(v, "true", 4))
        return json_true();
    if (n == 5 && !strncmp(v, "false", 5))
        return json_false();
    if (n == 0 || (n == 4 && !strncmp(v, "null", 4)) || (n == 1 && v[0] == '~'))
        return json_null();
    char buf[64];
    if (n < sizeof buf && strspn(v, "0123456789+-.eE") >= n) {
        memcpy(buf, v, n);
        buf[n] = '\0';
        char *end;
        if (!strpbrk(buf, ".eE")) {
            long long i = strtoll(buf, &end, 10);
            if (!*end)
                return json_integer(i);
        } else {
            double d = strtod(buf, &end);
            if (!*end)
                return json_real(d);
        }
    }
    return json_stringn(v, n);
}

/* Trims spaces at both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t' || (*s)[*n - 1] == '\r'))
        (*n)--;
}

/* The next line of [*q, end) that is not blank, trimmed, in *s and *n;
 * moves *q past it. Returns 0 when none is left. */
static int next_line(const char **q, const char *end, const char **s, size_t *n)
{
    while (*q < end) {
        const char *e = memchr(*q, '\n', (size_t)(end - *q));
        *s = *q;
        *n = (size_t)((e ? e : end) - *q);
        *q = e ? e + 1 : end;
        trim(s, n);
        if (*n)
            return 1;
    }
    return 0;
}

/* The frontmatter of a SKILL.md as a JSON object, read as simple YAML:
 * "key: value" lines, a key followed by indented "key: value" lines (a
 * map), and > or | blocks. NULL, with error filled, for anything else. */
static json_t *frontmatter(const char *text, tn_error_t *error)
{
    if (strncmp(text, "---\n", 4)) {
        tn__set_error(error, "SKILL.md does not begin with frontmatter (a line ---)");
        return NULL;
    }
    const char *p = text + 4, *close = strstr(p - 1, "\n---");
    if (!close) {
        tn__set_error(error, "SKILL.md's frontmatter has no closing line ---");
        return NULL;
    }
    json_t *out = json_object();
    while (out && p < close + 1) {
        const char *eol = memchr(p, '\n', (size_t)(close + 1 - p));
        if (!eol)
            eol = close + 1;
        const char *line = p;
        size_t len = (size_t)(eol - p);
        p = eol + 1;
        const char *t = line;
        size_t tn = len;
        trim(&t, &tn);
        if (tn == 0 || t[0] == '#')
            continue;
        const char *colon = memchr(line, ':', len);
        if (!colon || line[0] == ' ' || colon == line) {
            tn__set_error(error, "SKILL.md frontmatter line \"%.*s\": want key: value", (int)len, line);
            json_decref(out);
            return NULL;
        }
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(colon - line), line);
        const char *v = colon + 1;
        size_t vn = (size_t)(eol - v);
        trim(&v, &vn);
        /* the indented lines under the key */
        const char *nested = p, *nested_end = p;
        while (nested_end < close + 1 && (*nested_end == ' ' || *nested_end == '\n')) {
            const char *e = memchr(nested_end, '\n', (size_t)(close + 1 - nested_end));
            nested_end = e ? e + 1 : close + 1;
        }
        p = nested_end;
        int blank = 1;
        for (const char *q = nested; q < nested_end; q++)
            blank = blank && (*q == ' ' || *q == '\n' || *q == '\r' || *q == '\t');
        json_t *value = NULL;
        if (vn && (v[0] == '>' || v[0] == '|') && (vn == 1 || (vn == 2 && v[1] == '-'))) {
            char *joined = malloc((size_t)(nested_end - nested) + 2);
            size_t k = 0;
            const char *q = nested, *s;
            size_t sn;
            while (joined && next_line(&q, nested_end, &s, &sn)) {
                if (k)
                    joined[k++] = v[0] == '>' ? ' ' : '\n';
                memcpy(joined + k, s, sn);
                k += sn;
            }
            if (joined && vn == 1)
                joined[k++] = '\n';
            value = joined ? json_stringn(joined, k) : NULL;
            free(joined);
        } else if (vn == 0 && !blank) {
            value = json_object();
            const char *q = nested, *s;
            size_t sn;
            while (value && next_line(&q, nested_end, &s, &sn)) {
                const char *c = memchr(s, ':', sn);
                if (!c) {
                    json_decref(value);
                    value = NULL;
                    break;
                }
                char k2[256];
                snprintf(k2, sizeof k2, "%.*s", (int)(c - s), s);
                const char *v2 = c + 1;
                size_t v2n = sn - (size_t)(v2 - s);
                trim(&v2, &v2n);
                json_object_set_new(value, k2, scalar(v2, v2n));
            }
        } else if (blank) {
            value = scalar(v, vn);
        }
        if (!value) {
            tn__set_error(error, "SKILL.md frontmatter key \"%s\": a value the SDK's simple YAML does not read", key);
            json_decref(out);
            return NULL;
        }
        json_object_set_new(out, key, value);
    }
    return out;
}

static json_t *skill_read_fn(tn_call_t *call, const char *uri, json_t *vars,
                             void *user)
{
    (void)call, (void)uri, (void)vars;
    const struct skill_read *r = user;
    json_t *text = json_stringn(r->data, r->size); /* NULL unless UTF-8 */
    if (text) {
        json_decref(text);
        return tn_read_text(r->uri, r->mime, r->data);
    }
    return tn_read_blob(r->uri, r->mime, r->data, r->size);
}

static void skill_read_free(void *user)
{
    struct skill_read *r = user;
    free(r->uri);
    free(r->data);
    free(r);
}

/* Serves one file of a skill as a resource; takes its data over. */
static int serve_file(tn_server_t *server, const char *uri, struct skill_file *f,
                      tn_error_t *error)
{
    struct skill_read *r = calloc(1, sizeof *r);
    if (!r || !(r->uri = strdup(uri))) {
        free(r);
        tn__set_error(error, "out of memory");
        return -1;
    }
    size_t n = strlen(f->rel);
    json_t *text = json_stringn(f->data, f->size);
    r->mime = n > 3 && !strcmp(f->rel + n - 3, ".md") ? "text/markdown"
              : text                                  ? "text/plain"
                                                      : "application/octet-stream";
    json_decref(text);
    r->data = f->data;
    r->size = f->size;
    f->data = NULL;
    tn_resource_t res = {.uri = uri, .name = f->rel, .mime_type = r->mime,
                         .handler = skill_read_fn, .user = r};
    if (tn_server_add_resource(server, &res, error) != 0) {
        skill_read_free(r);
        return -1;
    }
    server->resources.items[server->resources.count - 1].free_user = skill_read_free;
    return 0;
}

int tn_server_add_skill(tn_server_t *server, const char *path, const char *dir,
                        tn_error_t *error)
{
    if (!server || !path || !dir) {
        tn__set_error(error, "server, path and dir are required");
        return -1;
    }
    const char *name = strrchr(path, '/');
    name = name ? name + 1 : path;
    if (path[0] == '/' || !skill_name_ok(name)) {
        tn__set_error(error, "skill path \"%s\" must end in a skill name "
                             "(lowercase letters, digits and single hyphens)", path);
        return -1;
    }
    char base[2048], skill_uri[2100];
    if (snprintf(base, sizeof base, "skill://%s/", path) >= (int)sizeof base ||
        snprintf(skill_uri, sizeof skill_uri, "%sSKILL.md", base) >= (int)sizeof skill_uri) {
        tn__set_error(error, "skill path \"%.64s...\" is too long", path);
        return -1;
    }
    if (server->started || tn__find_entry(&server->skills, skill_uri)) {
        tn__set_error(error, "skill \"%s\": already added, or the server is running", path);
        return -1;
    }
    struct skill_files f = {0};
    json_t *front = NULL, *files = NULL, *entry = NULL;
    int rc = walk(dir, "", &f, error);
    if (rc == 0)
        qsort(f.items, f.count, sizeof *f.items, by_rel);
    const struct skill_file *md = NULL;
    for (size_t i = 0; rc == 0 && i < f.count; i++)
        if (!strcmp(f.items[i].rel, "SKILL.md"))
            md = &f.items[i];
    if (rc == 0 && !md) {
        tn__set_error(error, "skill \"%s\": no SKILL.md in %s", path, dir);
        rc = -1;
    }
    if (rc == 0 && !(front = frontmatter(md->data, error)))
        rc = -1;
    const char *fname = json_string_value(json_object_get(front, "name"));
    const char *fdesc = json_string_value(json_object_get(front, "description"));
    if (rc == 0 && (!fname || strcmp(fname, name) || !fdesc || !*fdesc)) {
        tn__set_error(error, "skill \"%s\": its frontmatter must have name \"%s\" and a description", path, name);
        rc = -1;
    }
    if (rc == 0) {
        files = json_array();
        for (size_t i = 0; files && i < f.count; i++) {
            unsigned char sum[32];
            char digest[7 + 65], uri[8192];
            tn__sha256(f.items[i].data, f.items[i].size, sum);
            memcpy(digest, "sha256:", 7);
            for (int k = 0; k < 32; k++)
                snprintf(digest + 7 + 2 * k, 3, "%02x", sum[k]);
            if (snprintf(uri, sizeof uri, "%s%s", base, f.items[i].rel) >= (int)sizeof uri)
                break;
            json_array_append_new(files, json_pack("{s:s, s:s, s:I}", "uri", uri, "digest", digest,
                                                   "size", (json_int_t)f.items[i].size));
        }
        entry = json_pack("{s:s, s:O, s:O}", "uri", skill_uri, "frontmatter", front, "resources", files);
        if (!entry) {
            tn__set_error(error, "out of memory");
            rc = -1;
        }
    }
    for (size_t i = 0; rc == 0 && i < f.count; i++) {
        char uri[8192];
        if (snprintf(uri, sizeof uri, "%s%s", base, f.items[i].rel) >= (int)sizeof uri) {
            tn__set_error(error, "skill \"%s\": a file's path is too long", path);
            rc = -1;
            break;
        }
        rc = serve_file(server, uri, &f.items[i], error);
    }
    if (rc == 0 && tn__add_skill_entry(server, skill_uri, json_incref(entry)) != 0) {
        tn__set_error(error, "out of memory");
        rc = -1;
    }
    json_decref(front);
    json_decref(files);
    json_decref(entry);
    files_free(&f);
    if (rc == 0 && error)
        error->text[0] = '\0';
    return rc;
}
