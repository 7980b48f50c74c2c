/* fleetsim policy: the built-in policy components and their parameters
 * (from the registry's tables), and what a plugin declares. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "models/policy_plugin.h"
#include "policies/params.h"
#include "policies/registry.h"

static const char policy_usage[] =
    "usage: fleetsim policy list\n"
    "       fleetsim policy describe NAME|PLUGIN.so\n"
    "\n"
    "A policy spec composes components with '+', each with optional parameters:\n"
    "  ORDERING[+BACKFILL][+PLACEMENT][+preempt(...)][+quota(...)]\n"
    "e.g. 'sjf+easy', 'fairshare(half_life_s=3600)+easy+pack', 'tiresias+spread',\n"
    "'fcfs+easy+quota(guarantee=0:64;1:32)'. Parameters are name=value pairs\n"
    "separated by ','; lists use ';' between items and ':' inside one.\n"
    "A path ('./mypolicy.so', or './mypolicy.so:PARAMS') loads a plugin.\n"
    "\n"
    "list       every built-in component, by kind, with a one-line summary\n"
    "describe   one component's summary, origin and parameter table; or what a\n"
    "           plugin declares (name, summary, ABI version, parameters)\n"
    "\n"
    "exit codes: 0 ok, 2 usage or unknown name, 3 cannot load the plugin\n";

enum { POLICY_TEXT_MAX = 256, POLICY_PARAMS_SHOWN_MAX = 256 };

/* A plugin's string, as it may be: NULL, unterminated within reason, or
 * holding control bytes. Copies at most POLICY_TEXT_MAX - 1 bytes into buf,
 * control bytes as '?', and "..." where it was cut. */
static const char *plugin_text(char buf[POLICY_TEXT_MAX], const char *s, const char *if_null)
{
    if (!s)
        s = if_null;
    size_t n = 0;
    for (; n < POLICY_TEXT_MAX - 1 && s[n]; n++)
        buf[n] = (unsigned char)s[n] < 0x20 || s[n] == 0x7f ? '?' : s[n];
    buf[n] = '\0';
    if (n == POLICY_TEXT_MAX - 1 && s[n])
        memcpy(buf + n - 3, "...", 3);
    return buf;
}

static void print_params(const struct policy_param *params, size_t n)
{
    if (n == 0 || !params) {
        printf("parameters   none\n");
        return;
    }
    if (n > POLICY_PARAMS_SHOWN_MAX) {
        cli_warning("the parameter table declares %zu rows; showing the first %d", n, POLICY_PARAMS_SHOWN_MAX);
        n = POLICY_PARAMS_SHOWN_MAX;
    }
    /* the columns of every row, copied first: the table may come from a plugin */
    char(*cell)[4][POLICY_TEXT_MAX] = calloc(n, sizeof *cell);
    if (!cell) {
        cli_error("out of memory");
        return;
    }
    size_t wn = 4, wt = 4, wd = 7;
    for (size_t i = 0; i < n; i++) {
        plugin_text(cell[i][0], params[i].name, "(no name)");
        plugin_text(cell[i][1], params[i].type, "?");
        plugin_text(cell[i][2], params[i].default_value && *params[i].default_value ? params[i].default_value : NULL,
                    "(none)");
        plugin_text(cell[i][3], params[i].summary, "");
        if (strlen(cell[i][0]) > wn)
            wn = strlen(cell[i][0]);
        if (strlen(cell[i][1]) > wt)
            wt = strlen(cell[i][1]);
        if (strlen(cell[i][2]) + 2 > wd)
            wd = strlen(cell[i][2]) + 2;
    }
    printf("\n| %-*s | %-*s | %-*s | %s |\n", (int)wn, "name", (int)wt, "type", (int)wd, "default", "meaning");
    printf("|");
    for (size_t k = 0; k < 3; k++) {
        size_t w = (k == 0 ? wn : k == 1 ? wt : wd) + 2;
        for (size_t j = 0; j < w; j++)
            putchar('-');
        putchar('|');
    }
    printf("---------|\n");
    for (size_t i = 0; i < n; i++)
        printf("| %-*s | %-*s | %-*s | %s |\n", (int)wn, cell[i][0], (int)wt, cell[i][1], (int)wd, cell[i][2],
               cell[i][3]);
    free(cell);
}

static int policy_list(void)
{
    static const enum policy_component_kind kinds[] = {POLICY_COMPONENT_ORDERING, POLICY_COMPONENT_BACKFILL,
                                                       POLICY_COMPONENT_PLACEMENT, POLICY_COMPONENT_PREEMPTION,
                                                       POLICY_COMPONENT_QUOTA};
    printf("spec: ORDERING[+BACKFILL][+PLACEMENT][+preempt(...)][+quota(...)], e.g. fairshare+easy+pack\n");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        printf("\n%s:\n", policy_component_kind_name(kinds[k]));
        for (size_t i = 0; i < policy_registry_component_count(); i++) {
            const struct policy_component *c = policy_registry_component_at(i);
            if (c->kind != kinds[k])
                continue;
            size_t np = c->n_params ? *c->n_params : 0;
            char count[48] = "";
            if (np)
                snprintf(count, sizeof count, " [%zu parameters]", np);
            printf("  %-13s %s%s\n", c->name, c->summary, count);
        }
    }
    printf("\n'fleetsim policy describe NAME' prints a component's parameters; a path loads a plugin.\n");
    return CLI_OK;
}

static int describe_plugin(const char *path)
{
    struct policy_plugin pl;
    struct err err;
    err_clear(&err);
    char file[1024];
    if ((size_t)snprintf(file, sizeof file, "%s", path) >= sizeof file) {
        cli_error("plugin path is %zu bytes long, more than the %zu allowed", strlen(path), sizeof file - 1);
        return CLI_USAGE;
    }
    char *colon = strstr(file, ".so:");
    if (colon)
        colon[3] = '\0';
    if (policy_plugin_open(&pl, file, &err) != 0) {
        return cli_fail(&err, CLI_IO);
    }
    char text[POLICY_TEXT_MAX];
    printf("plugin       %s\n", file);
    printf("name         %s\n", plugin_text(text, pl.ops->name, "(none)"));
    printf("summary      %s\n", plugin_text(text, pl.ops->summary, ""));
    printf("abi version  %u\n", pl.ops->abi_version);
    printf("observe      %s\n", pl.ops->observe ? "yes" : "no");
    print_params(pl.params, pl.n_params);
    policy_plugin_unload(&pl);
    return CLI_OK;
}

static int policy_describe(const char *name)
{
    if (policy_plugin_is_path(name))
        return describe_plugin(name);
    const struct policy_component *c = policy_registry_component(name, strlen(name));
    if (!c) {
        const char *names[64];
        size_t n = 0;
        for (size_t i = 0; i < policy_registry_component_count() && n < 64; i++)
            names[n++] = policy_registry_component_at(i)->name;
        const char *near = params_nearest(name, strlen(name), names, n);
        if (near)
            cli_error("unknown policy component '%s'; did you mean '%s'?", name, near);
        else
            cli_error("unknown policy component '%s' (see 'fleetsim policy list')", name);
        return CLI_USAGE;
    }
    printf("name         %s\n", c->name);
    printf("kind         %s\n", policy_component_kind_name(c->kind));
    printf("summary      %s\n", c->summary);
    if (*c->reference)
        printf("reference    %s\n", c->reference);
    if (c->kind == POLICY_COMPONENT_ORDERING)
        printf("preemptive   %s\n", c->preemptive ? "yes (tiers from the ordering)" : "no (add +preempt)");
    print_params(c->params, c->n_params ? *c->n_params : 0);
    return CLI_OK;
}

int cmd_policy(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(policy_usage, stdout);
        return CLI_OK;
    }
    if (argc == 2 && !strcmp(argv[1], "list"))
        return policy_list();
    if (argc == 3 && !strcmp(argv[1], "describe"))
        return policy_describe(argv[2]);
    if (argc < 2)
        return cli_usage_error("policy", "no subcommand given (list, describe NAME)");
    if (!strcmp(argv[1], "list") || !strcmp(argv[1], "describe"))
        return cli_usage_error("policy", "'%s' takes %s", argv[1], !strcmp(argv[1], "list") ? "no arguments" : "one NAME");
    return cli_usage_error("policy", "unknown subcommand '%s' (list, describe NAME)", argv[1]);
}
