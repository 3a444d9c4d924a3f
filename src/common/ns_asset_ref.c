/* ns_asset_ref: how an asset is called (see ns_asset_ref.h). */
#include "common/ns_asset_ref.h"

#include <stdio.h>
#include <string.h>

int ns_asset_ref_is_path(const ns_asset_ref *r)
{
    return strcmp(r->name, "path") == 0;
}

const char *ns_asset_ref_label(const ns_asset_ref *r, char *buf, size_t size)
{
    if (!ns_asset_ref_is_path(r) || size == 0)
        return r->name;
    const char *p = r->path[0] ? r->path : r->requested;
    size_t end = strlen(p);
    while (end > 1 && p[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && p[start - 1] != '/')
        start--;
    if (start == end) /* "/" or "": nothing better than the path itself */
        return p[0] ? p : r->name;
    snprintf(buf, size, "%.*s", (int)(end - start), p + start);
    return buf;
}
