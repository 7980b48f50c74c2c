/* Unit tests of sim/child, the one way fleetsim runs an outside program
 * (gnuplot, sbatch/squeue, the agent's Slurm commands). */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sim/child.h"
#include "tests/unit/suites.h"
#include "tests/unit/test.h"

static int exit_code(const struct child_result *cr)
{
    return WIFEXITED(cr->status) ? WEXITSTATUS(cr->status) : -1;
}

static void test_output_kept_and_split(void)
{
    char *argv[] = {"sh", "-c", "echo out; echo err >&2; exit 3", NULL};
    struct child_result cr;
    child_run(argv, NULL, 20, 1, &cr);
    CHECK(cr.started);
    CHECK(!cr.timed_out);
    CHECK_INT(exit_code(&cr), 3);
    CHECK_STR(cr.out, "out\n");
    CHECK_STR(cr.err, "err\n");
    /* not split: both in out, and only the first CHILD_OUTPUT_KEEP - 1 bytes */
    char *big[] = {"sh", "-c", "echo e >&2; head -c 100000 /dev/zero | tr '\\0' x", NULL};
    child_run(big, NULL, 20, 0, &cr);
    CHECK_INT(exit_code(&cr), 0);
    CHECK_INT(strlen(cr.out), CHILD_OUTPUT_KEEP - 1);
    CHECK(strncmp(cr.out, "e\nxxx", 5) == 0);
}

struct counted {
    size_t bytes, calls, refuse_after;
};

static int count_sink(void *ctx, const char *data, size_t n)
{
    struct counted *c = ctx;
    for (size_t i = 0; i < n; i++)
        if (data[i] != 'x')
            return -1;
    c->bytes += n;
    c->calls++;
    return c->refuse_after && c->calls >= c->refuse_after ? -1 : 0;
}

static void test_sink_gets_everything(void)
{
    char *argv[] = {"sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x", NULL};
    struct counted c = {0, 0, 0};
    struct child_result cr;
    child_run_ms(argv, NULL, 20000, 1, count_sink, &c, &cr);
    CHECK_INT(exit_code(&cr), 0);
    CHECK_INT(c.bytes, 300000); /* all of it, far past CHILD_OUTPUT_KEEP */
    CHECK_STR(cr.out, "");
    CHECK(!cr.sink_failed);
}

static void test_sink_refusal_stops_the_child(void)
{
    /* `yes` never ends: only the refusal (not the 60 s limit) can stop it */
    char *argv[] = {"sh", "-c", "yes x | tr -d '\\n'", NULL};
    struct counted c = {0, 0, 2};
    struct child_result cr;
    child_run_ms(argv, NULL, 60000, 1, count_sink, &c, &cr);
    CHECK(cr.sink_failed);
    CHECK(!cr.timed_out);
    CHECK_INT(c.calls, 2);
    CHECK(WIFSIGNALED(cr.status) || exit_code(&cr) != 0);
}

static void test_limit_and_missing_program(void)
{
    char *slow[] = {"sleep", "30", NULL};
    struct child_result cr;
    child_run_ms(slow, NULL, 100, 1, NULL, NULL, &cr);
    CHECK(cr.timed_out);
    CHECK(WIFSIGNALED(cr.status));
    char *missing[] = {"fleetsim-no-such-program", NULL};
    child_run_ms(missing, NULL, 20000, 1, NULL, NULL, &cr);
    CHECK(cr.started);
    CHECK_INT(exit_code(&cr), CHILD_EXIT_NO_EXEC);
    CHECK(!child_in_path("fleetsim-no-such-program"));
    CHECK(child_in_path("sh"));
}

#ifdef __linux__
/* A process is gone once /proc has no entry for it or it is a zombie (in a
 * container nobody may reap an orphan). */
static int alive(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    const char *rparen = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
    fclose(f);
    return rparen && rparen[1] == ' ' && rparen[2] != 'Z';
}

/* the caller's side: hands what the child prints to the test through a pipe */
static int to_pipe(void *ctx, const char *data, size_t n)
{
    return write(*(int *)ctx, data, n) == (ssize_t)n ? 0 : -1;
}

/* A SIGKILLed caller (the agent) must not leave its command running: a
 * Slurm command it no longer waits for would act after its successor took
 * over. */
static void test_dies_with_its_caller(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t caller = fork();
    if (caller == 0) {
        close(p[0]);
        char *argv[] = {"sh", "-c", "echo $$; exec sleep 30", NULL};
        struct child_result cr;
        child_run_ms(argv, NULL, 60000, 1, to_pipe, &p[1], &cr);
        _exit(0);
    }
    close(p[1]);
    char buf[32] = "";
    ssize_t got = read(p[0], buf, sizeof buf - 1);
    close(p[0]);
    long pid = got > 0 ? strtol(buf, NULL, 10) : 0;
    CHECK(pid > 0);
    CHECK(pid > 0 && alive((pid_t)pid));
    kill(caller, SIGKILL);
    waitpid(caller, NULL, 0);
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500 && pid > 0 && alive((pid_t)pid); i++)
        nanosleep(&tick, NULL);
    CHECK(pid > 0 && !alive((pid_t)pid));
    if (pid > 0 && alive((pid_t)pid))
        kill((pid_t)pid, SIGKILL); /* a failed check leaves no sleeper */
}
#endif

/* One word for /bin/sh, checked by a real shell: each word, however
 * hostile, comes back from `printf '%s\n' WORD` as it went in. */
static void test_shell_word(void)
{
    static const char *const words[] = {"plain/path-1.yaml", "", "two words", "it's", "'", "$(touch x)", "a\"b\\c",
                                        "back`tick`", "semi;colon", "new\nline", "*?[]", "~user", "-flag"};
    char *w = child_shell_word("scenarios/q1.yaml");
    CHECK_STR(w, "scenarios/q1.yaml"); /* safe: left as is */
    free(w);
    w = child_shell_word("it's");
    CHECK_STR(w, "'it'\\''s'");
    free(w);
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        char *word = child_shell_word(words[i]);
        char script[256];
        snprintf(script, sizeof script, "printf '%%s|' %s", word);
        char *argv[] = {"sh", "-c", script, NULL};
        struct child_result cr;
        child_run(argv, NULL, 10, 0, &cr);
        char want[128];
        snprintf(want, sizeof want, "%s|", words[i]);
        CHECK(WIFEXITED(cr.status) && WEXITSTATUS(cr.status) == 0);
        CHECK_STR(cr.out, want);
        free(word);
    }
}

void suite_child(void)
{
    test_run("child keeps output, stderr split", test_output_kept_and_split);
    test_run("child hands all stdout to a sink", test_sink_gets_everything);
    test_run("child stops when the sink refuses", test_sink_refusal_stops_the_child);
    test_run("child limit and missing program", test_limit_and_missing_program);
#ifdef __linux__
    test_run("child dies with its caller", test_dies_with_its_caller);
    test_run("child quotes a word for the shell", test_shell_word);
#endif
}
