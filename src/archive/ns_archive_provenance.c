/* ns_archive_provenance: provenance.json's fields (see ns_archive_provenance.h). */
#include "archive/ns_archive_provenance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "common/ns_sys.h"

static const char *or_unknown(const char *s)
{
    return s ? s : "unknown";
}

json_t *ns_archive_prov_run(const ns_nc_info *info)
{
    static const char *const keys[] = {
        "normsweep_version", "git_commit", "executable_sha256", "compiler", "cflags", "blas",
        "mpi_library", "netcdf_version", "hdf5_version", "os", "mpi_size", "start_time",
        "end_time", "command_line", "history", "sweep_file", "shard_count", "corpus_tokens",
        "corpus_gutenberg_stripped"};
    json_t *run = json_object();
    for (size_t i = 0; run && i < sizeof keys / sizeof keys[0]; i++) {
        long long v;
        double d;
        const char *s = ns_nc_info_text(info, keys[i]);
        if (s)
            json_object_set_new(run, keys[i], json_string(s));
        else if (ns_nc_info_int(info, keys[i], &v))
            json_object_set_new(run, keys[i], json_integer(v));
        else if (ns_nc_info_double(info, keys[i], &d))
            json_object_set_new(run, keys[i], json_real(d));
    }
    return run;
}

static json_t *asset_json(const ns_nc_info *info, const char *kind)
{
    char k1[64], k2[64], k3[64];
    snprintf(k1, sizeof k1, "%s_used", kind);
    snprintf(k2, sizeof k2, "%s_sha256", kind);
    snprintf(k3, sizeof k3, "%s_path", kind);
    json_t *o = json_object();
    if (!o)
        return NULL;
    if (strcmp(kind, "model") == 0)
        json_object_set_new(o, "requested",
                            json_string(or_unknown(ns_nc_info_text(info, "model_requested"))));
    json_object_set_new(o, "used", json_string(or_unknown(ns_nc_info_text(info, k1))));
    if (ns_nc_info_text(info, k3))
        json_object_set_new(o, "path", json_string(ns_nc_info_text(info, k3)));
    json_object_set_new(o, "sha256", json_string(or_unknown(ns_nc_info_text(info, k2))));
    return o;
}

json_t *ns_archive_prov_inputs(const ns_nc_info *info)
{
    json_t *inputs = json_object();
    if (inputs) {
        json_object_set_new(inputs, "model", asset_json(info, "model"));
        json_object_set_new(inputs, "tokenizer", asset_json(info, "tokenizer"));
        json_object_set_new(inputs, "corpus", asset_json(info, "corpus"));
    }
    return inputs;
}

const char *const *ns_archive_prov_fields(const char *section)
{
    static const char *const top[] = {"format", "created", "run", "inputs", "archiver",
                                      "machine", "files", NULL};
    static const char *const archiver[] = {"normsweep_version", "git_commit", "compiler", "cflags",
                                           "blas", NULL};
    static const char *const machine[] = {"uname", "hostname", "cpu_model", "cores",
                                          "memory_bytes", "note", NULL};
    static const char *const files[] = {"netcdf", "sweep", "journal", "journal_parts",
                                        "model_files", "run_dir", "members", NULL};
    static const char *const member[] = {"member", "bytes", "source", NULL};
    return strcmp(section, "") == 0           ? top
           : strcmp(section, "archiver") == 0 ? archiver
           : strcmp(section, "machine") == 0  ? machine
           : strcmp(section, "files") == 0    ? files
           : strcmp(section, "member") == 0   ? member
                                              : NULL;
}

int ns_archive_history_last(const char *history, ns_history_line *out)
{
    memset(out, 0, sizeof *out);
    if (!history)
        return 0;
    size_t n = strlen(history);
    while (n && history[n - 1] == '\n')
        n--;
    const char *line = history + n;
    while (line > history && line[-1] != '\n')
        line--;
    size_t len = (size_t)(history + n - line);
    char *l = malloc(len + 1);
    if (!l)
        return 0;
    memcpy(l, line, len);
    l[len] = 0;
    int ok = 0;
    char *sp = strchr(l, ' '), *git = strstr(l, " (git "), *colon = strstr(l, "): ");
    if (sp && git && colon && git > sp && colon > git &&
        strncmp(sp, " normsweep ", 11) == 0) {
        snprintf(out->time, sizeof out->time, "%.*s", (int)(sp - l), l);
        snprintf(out->version, sizeof out->version, "%.*s", (int)(git - sp - 11), sp + 11);
        snprintf(out->git, sizeof out->git, "%.*s", (int)(colon - git - 6), git + 6);
        const char *rest = colon + 3, *on = NULL;
        for (const char *p = strstr(rest, " on "); p; p = strstr(p + 1, " on ")) {
            char *end;
            long long k = strtoll(p + 4, &end, 10);
            if (end > p + 4 && strncmp(end, " rank", 5) == 0)
                on = p, out->ranks = k;
        }
        if (on) {
            snprintf(out->command, sizeof out->command, "%.*s", (int)(on - rest), rest);
            ok = 1;
            /* ", in DIR" after the host, up to ", slurm job " or the closing parenthesis */
            const char *in = strstr(on, " (host ");
            in = in ? strstr(in, ", in ") : NULL;
            if (in) {
                in += 5;
                const char *end = strstr(in, ", slurm job ");
                if (!end) {
                    end = strstr(in, "); journal segment ");
                    const char *r = strstr(in, ") [resumed]; journal segment ");
                    if (r && (!end || r < end))
                        end = r;
                }
                if (end)
                    snprintf(out->cwd, sizeof out->cwd, "%.*s", (int)(end - in), in);
            }
        }
    }
    free(l);
    return ok;
}

void ns_machine_describe(ns_machine_info *m)
{
    memset(m, 0, sizeof *m);
    struct utsname u;
    if (uname(&u) == 0) {
        snprintf(m->sysname, sizeof m->sysname, "%s", u.sysname);
        snprintf(m->nodename, sizeof m->nodename, "%s", u.nodename);
        snprintf(m->release, sizeof m->release, "%s", u.release);
        snprintf(m->version, sizeof m->version, "%s", u.version);
        snprintf(m->machine, sizeof m->machine, "%s", u.machine);
    } else {
        strcpy(m->sysname, "unknown");
        strcpy(m->nodename, "unknown");
        strcpy(m->release, "unknown");
        strcpy(m->version, "unknown");
        strcpy(m->machine, "unknown");
    }
    strcpy(m->cpu_model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) != 0 && strncmp(line, "Model", 5) != 0)
                continue;
            char *colon = strchr(line, ':');
            if (!colon)
                continue;
            colon++;
            while (*colon == ' ' || *colon == '\t')
                colon++;
            colon[strcspn(colon, "\n")] = 0;
            if (*colon) {
                snprintf(m->cpu_model, sizeof m->cpu_model, "%s", colon);
                break;
            }
        }
        fclose(f);
    }
    m->cores = ns_sys_cores();
    m->memory_bytes = ns_sys_memory_bytes();
}
