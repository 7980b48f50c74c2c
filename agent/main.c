/* fleetsim-agent: the live agent's command line. `run` starts the daemon;
 * `inventory` shows the GPUs it would manage; the client commands talk to a
 * running agent (agent/client.h). `__supervise` is the per-job supervisor
 * (agent/executor.h), not for people.
 */
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "agent/client.h"
#include "agent/config.h"
#include "agent/daemon.h"
#include "agent/executor.h"
#include "agent/inventory.h"
#include "agent/log.h"
#include "agent/nvml.h"
#include "agent/slurm_backend.h"
#include "agent/slurm_cli.h"

#ifndef FLEETSIM_VERSION_STRING
#define FLEETSIM_VERSION_STRING "dev"
#endif

static const char main_usage[] =
    "usage: fleetsim-agent COMMAND [options]\n"
    "\n"
    "The live agent: owns this node's GPUs, queues jobs, runs the same scheduling\n"
    "policy object code as fleetsim, and records a trace fleetsim replays.\n"
    "\n"
    "daemon:\n"
    "  run        start the agent (under systemd: see fleetsim-agent(8)); with\n"
    "             --backend slurm --partition P it schedules a Slurm partition\n"
    "  inventory  show the GPUs the agent would manage (NVML or a fake file)\n"
    "\n"
    "jobs (talk to a running agent over its socket):\n"
    "  submit     queue a command: submit --gpus 2 --time 1h -- python train.py\n"
    "  queue      running and waiting jobs\n"
    "  show ID    one job in detail\n"
    "  cancel ID  cancel a job (its owner or an admin)\n"
    "  history    jobs that ended\n"
    "  nodes      nodes, GPUs, drains\n"
    "  drain T    stop new jobs on a node or GPU (admins)\n"
    "  resume T   end a drain (admins)\n"
    "  status     is the agent up, and with which policy\n"
    "\n"
    "'fleetsim-agent COMMAND --help' describes each command.\n"
    "exit codes: 0 ok, 1 refused by the agent, 2 usage or bad input,\n"
    "            3 agent unreachable or I/O error, 4 internal error\n";

static const char run_usage[] =
    "usage: fleetsim-agent run [--config FILE] [options]\n"
    "\n"
    "Runs the agent in the foreground, logging to stderr (logfmt). With systemd\n"
    "(Type=notify) it reports READY, STATUS, STOPPING and watchdog pings. On start\n"
    "it recovers: waiting jobs are reloaded, running jobs whose processes live are\n"
    "re-adopted, ended ones are settled. SIGTERM stops the agent but not the jobs.\n"
    "\n"
    "options (each overrides the config file):\n"
    "  -c, --config FILE      configuration (see agent/fleetsim-agent.conf)\n"
    "      --inventory SRC    'nvml' or a fake inventory JSON file\n"
    "  -p, --policy SPEC      any 'fleetsim replay --policy' spec (preemptive ones too:\n"
    "                         srtf, tiresias, +preempt(...)), or PATH.so[:PARAMS]\n"
    "      --socket PATH      the Unix socket to listen on\n"
    "      --state-dir DIR    where the state store, job folders and trace live\n"
    "      --log-level LEVEL  debug, info, warn, error\n"
    "      --backend B        'local' (default): this node's GPUs; 'slurm': schedule\n"
    "                         the held jobs of a Slurm partition (pin nodes, release)\n"
    "      --partition NAME   the Slurm partition (with --backend slurm)\n"
    "      --poll-ms N        Slurm backend: pause between passes when idle (default 500)\n"
    "  -h, --help             this help\n";

static const char inventory_usage[] =
    "usage: fleetsim-agent inventory [--config FILE] [--inventory nvml|FILE] [--json]\n"
    "\n"
    "Prints the nodes and GPUs the agent would manage (UUID, model, memory, PCI bus\n"
    "id, NVLink domain and peers, health), without starting it. With NVML it also\n"
    "lists which optional NVML features the driver offers.\n";

static int print_config_errors(const struct diag_list *diags, const struct err *err)
{
    char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
    if (diags->n == 0) {
        err_format(err, line, sizeof line);
        fprintf(stderr, "fleetsim-agent: %s\n", line);
        return AGENT_USAGE;
    }
    for (size_t i = 0; i < diags->n; i++) {
        diag_format(&diags->items[i], line, sizeof line);
        fprintf(stderr, "%s\n", line);
    }
    return AGENT_USAGE;
}

static int load_config(struct agent_config *cfg, const char *path)
{
    if (config_init(cfg) != 0) {
        fprintf(stderr, "fleetsim-agent: error: out of memory\n");
        return AGENT_INTERNAL;
    }
    if (!path)
        return AGENT_OK;
    struct diag_list diags;
    diag_list_init(&diags, 100);
    struct err err;
    err_clear(&err);
    int rc = AGENT_OK;
    if (config_load(cfg, path, &diags, &err) != 0)
        rc = diags.n ? print_config_errors(&diags, &err) : (fprintf(stderr, "fleetsim-agent: error: %s\n", err.msg), AGENT_IO);
    diag_list_release(&diags);
    return rc;
}

static int set_string(char *field, size_t size, const char *option, const char *value)
{
    if (strlen(value) >= size) {
        fprintf(stderr, "fleetsim-agent: error: option '%s' is too long\n", option);
        return -1;
    }
    snprintf(field, size, "%s", value);
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    enum { O_INVENTORY = 256, O_SOCKET, O_STATE, O_LOG, O_BACKEND, O_PARTITION, O_POLL };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},   {"inventory", required_argument, NULL, O_INVENTORY},
        {"policy", required_argument, NULL, 'p'},   {"socket", required_argument, NULL, O_SOCKET},
        {"state-dir", required_argument, NULL, O_STATE}, {"log-level", required_argument, NULL, O_LOG},
        {"backend", required_argument, NULL, O_BACKEND}, {"partition", required_argument, NULL, O_PARTITION},
        {"poll-ms", required_argument, NULL, O_POLL},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *inventory = NULL, *policy = NULL, *sock = NULL, *state = NULL, *level = NULL;
    const char *backend = "local", *partition = NULL;
    long poll_ms = 500;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:p:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case O_INVENTORY: inventory = optarg; break;
        case 'p': policy = optarg; break;
        case O_SOCKET: sock = optarg; break;
        case O_STATE: state = optarg; break;
        case O_LOG: level = optarg; break;
        case O_BACKEND: backend = optarg; break;
        case O_PARTITION: partition = optarg; break;
        case O_POLL: {
            char *end;
            poll_ms = strtol(optarg, &end, 10);
            if (*optarg == '\0' || *end != '\0' || poll_ms < 10 || poll_ms > 60000) {
                fprintf(stderr, "fleetsim-agent: error: --poll-ms needs a number from 10 to 60000\n");
                return AGENT_USAGE;
            }
            break;
        }
        case 'h': fputs(run_usage, stdout); return AGENT_OK;
        case ':':
            fprintf(stderr, "fleetsim-agent: error: option '%s' needs a value\ntry 'fleetsim-agent run --help'\n",
                    argv[optind - 1]);
            return AGENT_USAGE;
        default:
            fprintf(stderr, "fleetsim-agent: error: unknown option '%s'\ntry 'fleetsim-agent run --help'\n",
                    argv[optind - 1]);
            return AGENT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "fleetsim-agent: error: unexpected argument '%s'\ntry 'fleetsim-agent run --help'\n",
                argv[optind]);
        return AGENT_USAGE;
    }
    if (strcmp(backend, "local") != 0 && strcmp(backend, "slurm") != 0) {
        fprintf(stderr, "fleetsim-agent: error: unknown backend '%s' (local, slurm)\n", backend);
        return AGENT_USAGE;
    }
    if ((strcmp(backend, "slurm") == 0) != (partition != NULL)) {
        fprintf(stderr, "fleetsim-agent: error: %s\n",
                partition ? "--partition goes with --backend slurm" : "--backend slurm needs --partition NAME");
        return AGENT_USAGE;
    }
    struct agent_config cfg;
    int rc = load_config(&cfg, config);
    if (rc != AGENT_OK) {
        config_release(&cfg);
        return rc;
    }
    if ((inventory && set_string(cfg.inventory, sizeof cfg.inventory, "--inventory", inventory)) ||
        (policy && set_string(cfg.policy, sizeof cfg.policy, "--policy", policy)) ||
        (sock && set_string(cfg.socket_path, CONFIG_SOCKET_MAX + 1, "--socket", sock)) ||
        (state && set_string(cfg.state_dir, sizeof cfg.state_dir, "--state-dir", state))) {
        config_release(&cfg);
        return AGENT_USAGE;
    }
    if (level && log_parse_level(level, &cfg.log_level) != 0) {
        fprintf(stderr, "fleetsim-agent: error: unknown log level '%s' (debug, info, warn, error)\n", level);
        config_release(&cfg);
        return AGENT_USAGE;
    }
    if (cfg.state_dir[0] != '/' || cfg.socket_path[0] != '/') {
        fprintf(stderr, "fleetsim-agent: error: --state-dir and --socket need absolute paths\n");
        config_release(&cfg);
        return AGENT_USAGE;
    }
    log_set_level(cfg.log_level);
    /* everything the agent writes (store, trace, job folders) holds other
     * users' command lines and environments: owner-only from the start */
    umask(077);
    struct err err;
    err_clear(&err);
    rc = partition ? slurm_backend_run(&cfg, partition, (int)poll_ms, &err) : daemon_run(&cfg, &err);
    if (rc != 0) {
        char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
        err_format(&err, line, sizeof line);
        fprintf(stderr, "fleetsim-agent: %s\n", line);
        /* a bad inventory, policy or config value is the admin's input */
        rc = strstr(err.msg, "cannot") || strstr(err.msg, "another agent") ? AGENT_IO : AGENT_USAGE;
        if (strstr(err.msg, "not found: use --inventory"))
            rc = AGENT_IO;
    }
    config_release(&cfg);
    return rc;
}

static int cmd_inventory(int argc, char **argv)
{
    enum { O_INVENTORY = 256, O_JSON };
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"inventory", required_argument, NULL, O_INVENTORY},
        {"json", no_argument, NULL, O_JSON},      {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *config = NULL, *source = NULL;
    int json = 0, c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case O_INVENTORY: source = optarg; break;
        case O_JSON: json = 1; break;
        case 'h': fputs(inventory_usage, stdout); return AGENT_OK;
        default:
            fprintf(stderr, "fleetsim-agent: error: unknown option or missing value '%s'\n"
                            "try 'fleetsim-agent inventory --help'\n",
                    argv[optind - 1]);
            return AGENT_USAGE;
        }
    }
    struct agent_config cfg;
    int rc = load_config(&cfg, config);
    if (rc != AGENT_OK) {
        config_release(&cfg);
        return rc;
    }
    if (source)
        snprintf(cfg.inventory, sizeof cfg.inventory, "%s", source);
    struct inventory inv;
    inventory_init(&inv);
    struct err err;
    err_clear(&err);
    struct nvml *nvml = NULL;
    char host[64] = "localhost";
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    if (strcmp(cfg.inventory, "nvml") == 0) {
        nvml = nvml_open(NULL, &err);
        if (!nvml || nvml_fill_inventory(nvml, cfg.node_name[0] ? cfg.node_name : host, &inv, &err) != 0)
            rc = AGENT_IO;
    } else if (inventory_load_fake(&inv, cfg.inventory, &err) != 0) {
        rc = err.file[0] ? AGENT_USAGE : AGENT_IO;
    }
    if (rc != AGENT_OK) {
        char line[ERR_MSG_MAX + ERR_FILE_MAX + 64];
        err_format(&err, line, sizeof line);
        fprintf(stderr, "fleetsim-agent: %s\n", line);
    } else if (json) {
        json_t *nodes = json_array();
        for (uint32_t i = 0; i < inv.n_nodes; i++) {
            json_t *gl = json_array();
            for (int32_t k = 0; k < inv.nodes[i].n_gpus; k++) {
                const struct inv_gpu *g = &inv.gpus[inv.nodes[i].first_gpu + k];
                json_t *peers = json_array();
                for (int32_t p = 0; p < g->n_peers; p++)
                    json_array_append_new(peers, json_integer(inv.gpus[g->peers[p]].local_index));
                json_array_append_new(gl, json_pack("{s:i, s:s, s:s, s:I, s:s, s:i, s:o}", "index", g->local_index,
                                                    "uuid", g->uuid, "model", g->model, "memory_bytes",
                                                    (json_int_t)g->memory_bytes, "pci_bus_id", g->pci_bus_id,
                                                    "nvlink_domain", g->nvlink_domain, "nvlink_peers", peers));
            }
            json_array_append_new(nodes, json_pack("{s:s, s:o}", "name", inv.nodes[i].name, "gpus", gl));
        }
        json_t *o = json_pack("{s:s, s:s, s:o}", "source", nvml ? "nvml" : "fake", "driver_version", inv.driver_version,
                              "nodes", nodes);
        if (nvml)
            json_object_set_new(o, "nvml_features", json_string(nvml_features(nvml)));
        char *s = json_dumps(o, JSON_INDENT(2));
        json_decref(o);
        if (s)
            puts(s);
        free(s);
    } else {
        printf("source: %s, driver %s%s%s\n", nvml ? "nvml" : "fake inventory", inv.driver_version,
               nvml ? ", features: " : "", nvml ? nvml_features(nvml) : "");
        for (uint32_t i = 0; i < inv.n_nodes; i++) {
            printf("%s: %d GPUs\n", inv.nodes[i].name, inv.nodes[i].n_gpus);
            for (int32_t k = 0; k < inv.nodes[i].n_gpus; k++) {
                const struct inv_gpu *g = &inv.gpus[inv.nodes[i].first_gpu + k];
                printf("  %2d  %s  %-28s %7llu MiB  %s", g->local_index, g->uuid, g->model,
                       (unsigned long long)(g->memory_bytes >> 20), g->pci_bus_id[0] ? g->pci_bus_id : "-");
                if (g->nvlink_domain >= 0)
                    printf("  nvlink domain %d (%d peers)", g->nvlink_domain, g->n_peers);
                if (g->last_xid)
                    printf("  last xid %d", g->last_xid);
                putchar('\n');
            }
        }
    }
    nvml_close(nvml);
    inventory_release(&inv);
    config_release(&cfg);
    return rc;
}

/* The moved argv lives as long as the process, as argv does; kept here
 * (volatile: a store the compiler may not drop) so leak checkers see it. */
static char **volatile moved_argv;

int main(int argc, char **argv)
{
    /* GSL's default handler aborts the process; every call's status is checked instead */
    gsl_set_error_handler_off();
    if (argc >= 2 && strcmp(argv[1], "__supervise") == 0)
        return executor_supervise_main();
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) {
        fputs(main_usage, stderr);
        return AGENT_USAGE;
    }
    /* `fleetsim-agent --socket PATH show 3`: a leading --socket is moved
     * after the command, where the commands parse it */
    char **moved = NULL;
    if (argc >= 3 && (strcmp(argv[1], "--socket") == 0 || strncmp(argv[1], "--socket=", 9) == 0)) {
        int n_opt = strcmp(argv[1], "--socket") == 0 ? 2 : 1;
        if (argc > n_opt + 1) {
            moved = calloc((size_t)argc + 1, sizeof *moved);
            if (moved) {
                int k = 0;
                moved[k++] = argv[0];
                moved[k++] = argv[n_opt + 1];
                for (int i = 1; i <= n_opt; i++)
                    moved[k++] = argv[i];
                for (int i = n_opt + 2; i < argc; i++)
                    moved[k++] = argv[i];
                argv = moved;
                moved_argv = moved;
            }
        }
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        if (strcmp(cmd, "help") == 0 && argc > 2) {
            char *args[] = {argv[2], "--help", NULL};
            if (strcmp(argv[2], "run") == 0)
                return cmd_run(2, args);
            if (strcmp(argv[2], "inventory") == 0)
                return cmd_inventory(2, args);
            if (client_is_command(argv[2]))
                return client_main(argv[2], 2, args);
            fprintf(stderr, "fleetsim-agent: error: no command '%s'\n", argv[2]);
            return AGENT_USAGE;
        }
        fputs(main_usage, stdout);
        return AGENT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("fleetsim-agent %s\n", FLEETSIM_VERSION_STRING);
        return AGENT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "inventory") == 0)
        return cmd_inventory(argc - 1, argv + 1);
    if (strcmp(cmd, "submit") == 0 && slurm_cli_wanted(argc - 1, argv + 1))
        return slurm_cli_submit(argc - 1, argv + 1);
    if (client_is_command(cmd))
        return client_main(cmd, argc - 1, argv + 1);
    fprintf(stderr, "fleetsim-agent: error: unknown command '%s'\ntry 'fleetsim-agent --help'\n", cmd);
    return AGENT_USAGE;
}
