/* config: the agent's configuration file, `key = value` lines (see
 * agent/fleetsim-agent.conf for every key with its default). Comments start
 * with `#`; values run to the end of the line (surrounding blanks and one
 * pair of double quotes are stripped); lists are blank-separated.
 *
 * Every problem is reported as "FILE:LINE:COL: error: ..." in a diag_list:
 * unknown keys (with the nearest valid key), repeated keys, values out of
 * range. Nothing is silently defaulted except keys that are absent.
 * The config owns its lists; release it with config_release().
 */
#ifndef FLEETSIM_AGENT_CONFIG_H
#define FLEETSIM_AGENT_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "agent/log.h"
#include "sim/err.h"

enum { CONFIG_PATH_MAX = 4096, CONFIG_MAX_XIDS = 64, CONFIG_SOCKET_MAX = 107 };

struct agent_config {
    char socket_path[CONFIG_PATH_MAX];
    int socket_mode;
    char state_dir[CONFIG_PATH_MAX];
    char inventory[CONFIG_PATH_MAX]; /* "nvml" or a fake inventory file */
    char policy[CONFIG_PATH_MAX];    /* a registry spec, or PATH.so[:PARAMS] */
    char trace[CONFIG_PATH_MAX];     /* "" = STATE_DIR/trace.jsonl */
    char admin_group[64];            /* "" = only root is admin */
    char http_listen[128];           /* "" = off; else HOST:PORT */
    char http_token_file[CONFIG_PATH_MAX];
    int http_allow_remote;
    char node_name[64]; /* name of this host's node with NVML; "" = hostname */
    int64_t kill_grace_us;
    int64_t decide_timeout_us; /* one decide() call longer than this marks the policy failed */
    int64_t default_time_us;
    int64_t max_time_us;
    int64_t max_queued;
    int64_t health_interval_us;
    char **env_allow; /* patterns; a trailing '*' matches any suffix */
    size_t n_env_allow;
    int xid_drain[CONFIG_MAX_XIDS];
    size_t n_xid_drain;
    int drain_on_ecc;
    enum log_level log_level;
    int require_cgroup;          /* refuse to start without a usable cgroup v2 for jobs */
    int64_t max_conns_per_uid;   /* open socket connections one uid (not root) may hold */
    int64_t max_requests_per_uid; /* requests per second one uid (not root) may make; a burst of twice that */
    int64_t conn_idle_timeout_us; /* a connection that sends nothing this long is closed */
};

/* Defaults: see agent/fleetsim-agent.conf. Returns 0 or -1 (memory). */
int config_init(struct agent_config *c);
void config_release(struct agent_config *c);
/* Reads path over the current values. Returns 0, or -1 with every problem in
 * diags and the first in err (a file that cannot be read sets err only). */
int config_load(struct agent_config *c, const char *path, struct diag_list *diags, struct err *err);
/* Parses text (a config file's content) under the name `name`. */
int config_parse(struct agent_config *c, const char *name, const char *text, struct diag_list *diags,
                 struct err *err);
/* Does the environment variable name match the allowlist? */
int config_env_allowed(const struct agent_config *c, const char *name);
int config_xid_drains(const struct agent_config *c, int xid);
/* "90s", "1.5h", "30m", "2d", "1:30:00", "2-00:00:00" -> microseconds.
 * A bare number is refused (seconds or minutes?). Returns 0 or -1. */
int config_parse_duration(const char *text, int64_t *us);

#endif
