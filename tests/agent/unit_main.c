/* unit_main.c: the agent's unit-test binary (build/tests/agent_unit_tests,
 * separate so the agent's modules and their SQLite/libdl dependencies stay
 * out of the simulator's tests); the harness is tests/unit/test_harness.c. */
#include <stdio.h>

#include "tests/unit/test.h"

void suite_agent_cgroup(void);
void suite_agent_config(void);
void suite_agent_inventory(void);
void suite_agent_protocol(void);
void suite_agent_scheduler(void);
void suite_agent_slurm_json(void);
void suite_agent_state_lock(void);
void suite_agent_store(void);

int main(int argc, char **argv)
{
    if (argc > 1)
        test_filter(argv[1]);
    setvbuf(stdout, NULL, _IOLBF, 0);
    suite_agent_cgroup();
    suite_agent_config();
    suite_agent_inventory();
    suite_agent_protocol();
    suite_agent_scheduler();
    suite_agent_slurm_json();
    suite_agent_state_lock();
    suite_agent_store();
    return test_report("agent unit");
}
