/* Unit tests: agent/config (the config file, durations, allowlist). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim/suggest.h"
#include "agent/config.h"
#include "tests/unit/test.h"

void suite_agent_config(void);

static void test_defaults_and_keys(void)
{
    struct agent_config c;
    CHECK_INT(config_init(&c), 0);
    CHECK_STR(c.policy, "fcfs+easy");
    CHECK_STR(c.inventory, "nvml");
    struct diag_list d;
    diag_list_init(&d, 50);
    struct err e;
    err_clear(&e);
    const char *text = "# comment\n"
                       "policy = sjf+conservative\n"
                       "inventory = \"/etc/inv.json\"   # trailing comment\n"
                       "kill_grace = 2.5s\n"
                       "max_time = 2-00:00:00\n"
                       "socket_mode = 0660\n"
                       "env_allow = PATH HF_*\n"
                       "drain_on_xid = 79 48\n"
                       "http_listen = 127.0.0.1:9401\n";
    CHECK_INT(config_parse(&c, "a.conf", text, &d, &e), 0);
    CHECK_STR(c.policy, "sjf+conservative");
    CHECK_STR(c.inventory, "/etc/inv.json");
    CHECK_INT(c.kill_grace_us, 2500000);
    CHECK_INT(c.max_time_us, 2LL * 86400 * 1000000);
    CHECK_INT(c.socket_mode, 0660);
    CHECK(config_env_allowed(&c, "PATH"));
    CHECK(config_env_allowed(&c, "HF_HOME"));
    CHECK(!config_env_allowed(&c, "HOME"));
    CHECK(config_xid_drains(&c, 79) && config_xid_drains(&c, 48) && !config_xid_drains(&c, 13));
    diag_list_release(&d);
    config_release(&c);
}

static void test_errors_have_positions(void)
{
    struct agent_config c;
    config_init(&c);
    struct diag_list d;
    diag_list_init(&d, 50);
    struct err e;
    err_clear(&e);
    const char *text = "polcy = fcfs\n"
                       "  kill_grace = 10\n"
                       "policy = a\npolicy = b\n"
                       "socket = relative/path\n"
                       "nonsense line\n";
    CHECK_INT(config_parse(&c, "b.conf", text, &d, &e), -1);
    CHECK_INT(d.n, 5);
    char line[1024];
    diag_format(&d.items[0], line, sizeof line);
    CHECK_STR(line, "b.conf:1:1: error: unknown key 'polcy'; did you mean 'policy'?");
    diag_format(&d.items[1], line, sizeof line);
    CHECK_STR(line, "b.conf:2:16: error: key 'kill_grace': expected a duration such as 10s, 5m, 1h or 1:00:00, "
                    "not '10'");
    diag_format(&d.items[2], line, sizeof line);
    CHECK_STR(line, "b.conf:4:1: error: key 'policy' given twice");
    diag_format(&d.items[3], line, sizeof line);
    CHECK_STR(line, "b.conf:5:10: error: key 'socket': expected an absolute path, not 'relative/path'");
    diag_format(&d.items[4], line, sizeof line);
    CHECK_STR(line, "b.conf:6:1: error: expected 'key = value'");
    diag_list_release(&d);
    config_release(&c);
}

static void test_durations(void)
{
    int64_t us;
    CHECK(config_parse_duration("90s", &us) == 0 && us == 90000000);
    CHECK(config_parse_duration("1.5h", &us) == 0 && us == 5400000000LL);
    CHECK(config_parse_duration("30m", &us) == 0 && us == 1800000000LL);
    CHECK(config_parse_duration("2d", &us) == 0 && us == 172800000000LL);
    CHECK(config_parse_duration("1:30:00", &us) == 0 && us == 5400000000LL);
    CHECK(config_parse_duration("10:00", &us) == 0 && us == 600000000LL);
    CHECK(config_parse_duration("1-00:00:01", &us) == 0 && us == 86401000000LL);
    CHECK(config_parse_duration("250ms", &us) == 0 && us == 250000);
    CHECK(config_parse_duration("90", &us) != 0);
    CHECK(config_parse_duration("-5s", &us) != 0);
    CHECK(config_parse_duration("1:70:00", &us) != 0);
    CHECK(config_parse_duration("abc", &us) != 0);
    CHECK(config_parse_duration("", &us) != 0);
    CHECK_INT(suggest_distance("polcy", "policy"), 1);
}

/* A file saved with a UTF-8 byte order mark (Notepad does) reads as the
 * same file without it; its first key is not "\ufeffsocket". */
static void test_byte_order_mark(void)
{
    char path[] = "/tmp/fleetsim-bom-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    static const char text[] = "\xEF\xBB\xBFsocket = /run/x.sock\npolicy = sjf\n";
    CHECK(write(fd, text, sizeof text - 1) == (ssize_t)(sizeof text - 1));
    close(fd);
    struct agent_config c;
    config_init(&c);
    struct diag_list d;
    diag_list_init(&d, 50);
    struct err e;
    err_clear(&e);
    CHECK_INT(config_load(&c, path, &d, &e), 0);
    CHECK_INT(d.n, 0);
    CHECK_STR(c.socket_path, "/run/x.sock");
    CHECK_STR(c.policy, "sjf");
    diag_list_release(&d);
    config_release(&c);
    /* columns on line 1 count from after the mark */
    config_init(&c);
    diag_list_init(&d, 50);
    CHECK_INT(config_parse(&c, "bom.conf", "\xEF\xBB\xBFsockt = /x\n", &d, &e), -1);
    char line[256];
    CHECK_INT(d.n, 1);
    if (d.n == 1) {
        diag_format(&d.items[0], line, sizeof line);
        CHECK_STR(line, "bom.conf:1:1: error: unknown key 'sockt'; did you mean 'socket'?");
    }
    diag_list_release(&d);
    config_release(&c);
    unlink(path);
}

void suite_agent_config(void)
{
    test_run("config: a UTF-8 byte order mark is skipped", test_byte_order_mark);
    test_run("config: defaults and keys", test_defaults_and_keys);
    test_run("config: every error with its position", test_errors_have_positions);
    test_run("config: durations", test_durations);
}
