#include "models/policy_plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policies/registry.h"

int policy_plugin_is_path(const char *spec)
{
    /* only what comes before parameters counts: "fairshare(groups=...)" is
     * a built-in whatever its parameters hold */
    size_t len = strcspn(spec, "(:");
    if (memchr(spec, '/', len))
        return 1;
    return len >= 3 && memcmp(spec + len - 3, ".so", 3) == 0;
}

int policy_plugin_split(const char *spec, const char *extra_params, char *path, size_t len, const char **params,
                        struct err *err)
{
    size_t plen = strlen(spec);
    const char *so = strstr(spec, ".so:");
    *params = "";
    if (so) {
        plen = (size_t)(so - spec) + 3;
        *params = so + 4;
    }
    if (plen >= len)
        return err_set(err, NULL, 0, 0, "policy plugin path '%.64s...' is too long", spec);
    memcpy(path, spec, plen);
    path[plen] = '\0';
    if (extra_params && *extra_params) {
        if (**params)
            return err_set(err, NULL, 0, 0,
                           "plugin '%s' has parameters after ':': give them there or with --policy-params, not both",
                           spec);
        *params = extra_params;
    }
    return 0;
}

/* The first bytes of an ELF file: class (32/64-bit), byte order, machine.
 * Returns 0, or -1 when path cannot be read or is no ELF file. */
static int elf_ident(const char *path, unsigned char *cls, unsigned *machine)
{
    unsigned char h[20];
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got < sizeof h || memcmp(h, "\x7f" "ELF", 4) != 0)
        return -1;
    *cls = h[4];
    *machine = h[5] == 2 ? (unsigned)h[18] << 8 | h[19] : (unsigned)h[19] << 8 | h[18];
    return 0;
}

/* dlopen says "No such file or directory" for a plugin built for another
 * machine: say what the file is instead, when that is the reason. */
static int plugin_load_error(const char *path, const char *full, const char *why, struct err *err)
{
    unsigned char cls, mine_cls;
    unsigned machine, mine;
    FILE *f = fopen(full, "rb");
    if (f) {
        fclose(f);
        if (elf_ident(full, &cls, &machine) != 0)
            return err_set(err, NULL, 0, 0, "cannot load policy plugin '%s': not a shared object (no ELF header)",
                           path);
        if (elf_ident("/proc/self/exe", &mine_cls, &mine) == 0 && (cls != mine_cls || machine != mine))
            return err_set(err, NULL, 0, 0,
                           "cannot load policy plugin '%s': built for another machine (ELF class %u, machine %u; "
                           "this fleetsim is class %u, machine %u)",
                           path, cls, machine, mine_cls, mine);
    }
    return err_set(err, NULL, 0, 0, "cannot load policy plugin '%s': %s", path, why);
}

int policy_plugin_open(struct policy_plugin *pl, const char *path, struct err *err)
{
    memset(pl, 0, sizeof *pl);
    /* dlopen searches the library path for a bare name: a plugin is a file */
    char full[1024];
    snprintf(full, sizeof full, "%s%s", strchr(path, '/') ? "" : "./", path);
    pl->handle = dlopen(full, RTLD_NOW | RTLD_LOCAL);
    if (!pl->handle)
        return plugin_load_error(path, full, dlerror(), err);
    void *sym = dlsym(pl->handle, POLICY_ENTRY_SYMBOL);
    if (!sym) {
        policy_plugin_unload(pl);
        return err_set(err, NULL, 0, 0, "policy plugin '%s' does not export '%s'", path, POLICY_ENTRY_SYMBOL);
    }
    policy_entry_fn entry;
    memcpy(&entry, &sym, sizeof entry);
    const struct policy_ops *ops = entry();
    if (!ops) {
        policy_plugin_unload(pl);
        return err_set(err, NULL, 0, 0, "policy plugin '%s': %s() returned NULL", path, POLICY_ENTRY_SYMBOL);
    }
    /* the version first: an older or newer table may not even have the
     * fields checked next where this host expects them */
    if (ops->abi_version < POLICY_ABI_OLDEST || ops->abi_version > POLICY_ABI_VERSION) {
        /* the table lives in the library: read it before closing */
        /* what changed since, so the author knows what a rebuild involves */
        const char *since = ops->abi_version == 1
                                ? " (version 2 added GPU fractions and GPU-model constraints to the view: "
                                  "policy_job.milli and type_mask, policy_alloc.milli and gpu, cluster_view.shared; "
                                  "version 3 added a job's node shape, policy_job.nodes)"
                            : ops->abi_version == 2 ? " (version 3 added a job's node shape, policy_job.nodes: "
                                                      "a job of n nodes gets exactly n nodes with slots / n on each)"
                                                    : "";
        err_set(err, NULL, 0, 0,
                "policy plugin '%s' has ABI version %u, but this fleetsim needs %u to %u: rebuild it against "
                "this fleetsim's policies/policy.h%s",
                path, ops->abi_version, POLICY_ABI_OLDEST, POLICY_ABI_VERSION, since);
        policy_plugin_unload(pl);
        return -1;
    }
    if (!ops->name || !ops->create || !ops->destroy || !ops->decide) {
        policy_plugin_unload(pl);
        return err_set(err, NULL, 0, 0,
                       "policy plugin '%s' returned an incomplete policy_ops table (name, create, destroy and "
                       "decide are required)",
                       path);
    }
    pl->ops = ops;
    void *ksym = dlsym(pl->handle, POLICY_KINDS_SYMBOL);
    if (ksym)
        memcpy(&pl->decision_kinds, &ksym, sizeof pl->decision_kinds);
    void *psym = dlsym(pl->handle, POLICY_PARAMS_SYMBOL);
    if (psym) {
        policy_params_fn fn;
        memcpy(&fn, &psym, sizeof fn);
        pl->params = fn(&pl->n_params);
        if (!pl->params)
            pl->n_params = 0;
    }
    return 0;
}

int policy_plugin_create_builtin(struct policy_plugin *pl, const char *spec, const char *extra_params,
                                 struct err *err)
{
    memset(pl, 0, sizeof *pl);
    char msg[512] = "";
    const char *use = spec;
    char composed[1100];
    if (extra_params && *extra_params) {
        /* "ORDERING+REST" -> "ORDERING(PARAMS)+REST" */
        size_t olen = strcspn(spec, "+(");
        if (spec[olen] == '(')
            return err_set(err, NULL, 0, 0,
                           "policy '%s' already has parameters: give them in the spec or with "
                           "--policy-params, not both",
                           spec);
        int n = snprintf(composed, sizeof composed, "%.*s(%s)%s", (int)olen, spec, extra_params, spec + olen);
        if (n < 0 || (size_t)n >= sizeof composed)
            return err_set(err, NULL, 0, 0, "policy '%s' with parameters '%s' is too long", spec, extra_params);
        use = composed;
    }
    if (policy_registry_create(use, &pl->ops, &pl->state, msg, sizeof msg) != 0) {
        pl->ops = NULL;
        return err_set(err, NULL, 0, 0, "%s", msg);
    }
    return 0;
}

void policy_plugin_unload(struct policy_plugin *pl)
{
    if (!pl)
        return;
    if (pl->ops && pl->state)
        pl->ops->destroy(pl->state);
    if (pl->handle)
        dlclose(pl->handle);
    memset(pl, 0, sizeof *pl);
}
