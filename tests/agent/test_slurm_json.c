/* Unit tests: agent/slurm_json (Slurm 22.05's sinfo/squeue --json, host
 * lists, GRES strings). The JSON fragments keep the keys and value forms
 * that a live 22.05.8 cluster printed (tests/slurm/cluster.sh). */
#include <stdlib.h>
#include <string.h>

#include "agent/slurm_json.h"
#include "tests/unit/test.h"

void suite_agent_slurm_json(void);

static void test_hostlist(void)
{
    char names[16][SLURM_NAME_MAX];
    CHECK_INT(slurm_hostlist_expand("n[1-3,7],gpu01", names, 16), 5);
    CHECK_STR(names[0], "n1");
    CHECK_STR(names[2], "n3");
    CHECK_STR(names[3], "n7");
    CHECK_STR(names[4], "gpu01");
    CHECK_INT(slurm_hostlist_expand("gpu[08-10]-ib", names, 16), 3);
    CHECK_STR(names[0], "gpu08-ib"); /* zero padding kept */
    CHECK_STR(names[2], "gpu10-ib");
    CHECK_INT(slurm_hostlist_expand("", names, 16), 0);
    CHECK_INT(slurm_hostlist_expand("n[1-20]", names, 16), -1); /* more than max */
    CHECK_INT(slurm_hostlist_expand("n[3-1]", names, 16), -1);
    CHECK_INT(slurm_hostlist_expand("n[1-2", names, 16), -1);
}

static void test_gres(void)
{
    CHECK_INT(slurm_gres_gpus("gpu:8"), 8);
    CHECK_INT(slurm_gres_gpus("gres:gpu:8"), 8);
    CHECK_INT(slurm_gres_gpus("gres:gpu:h100:2"), 2);
    CHECK_INT(slurm_gres_gpus("gpu:(null):2(IDX:0-1)"), 2);
    CHECK_INT(slurm_gres_gpus("gpu:h100:4(S:0-1),gpu:a100:2"), 6);
    CHECK_INT(slurm_gres_gpus("gres:mps:100"), 0);
    CHECK_INT(slurm_gres_gpus(""), 0);
    int32_t idx[8];
    CHECK_INT(slurm_gres_indices("gpu:3(IDX:0-1,4)", idx, 8), 3);
    CHECK_INT(idx[2], 4);
    CHECK_INT(slurm_gres_indices("gpu:8", idx, 8), 0);
    CHECK_INT(slurm_gres_indices("gpu:9(IDX:0-8)", idx, 8), -1);
}

static const char sinfo_json[] =
    "{\"meta\":{},\"errors\":[],\"nodes\":["
    "{\"name\":\"n1\",\"state\":\"idle\",\"state_flags\":[],\"gres\":\"gpu:8\",\"gres_used\":\"gpu:0\","
    "\"partitions\":[\"gpu\",\"ext\"],\"features\":\"H100\",\"active_features\":\"H100\",\"reason\":\"\"},"
    "{\"name\":\"n2\",\"state\":\"mixed\",\"state_flags\":[\"DRAIN\"],\"gres\":\"gpu:8\",\"gres_used\":\"gpu:2\","
    "\"partitions\":[\"gpu\",\"ext\"],\"features\":\"\",\"active_features\":\"\",\"reason\":\"PSU swap\"},"
    "{\"name\":\"n3\",\"state\":\"down\",\"state_flags\":[\"NOT_RESPONDING\"],\"gres\":\"gpu:8\",\"gres_used\":\"gpu:0\","
    "\"partitions\":[\"ext\"]},"
    "{\"name\":\"n9\",\"state\":\"idle\",\"gres\":\"\",\"partitions\":[\"cpu\"]}]}";

static void test_nodes(void)
{
    struct slurm_node *nodes;
    size_t n;
    struct err e;
    err_clear(&e);
    CHECK_INT(slurm_parse_nodes(sinfo_json, strlen(sinfo_json), "ext", &nodes, &n, &e), 0);
    CHECK_INT(n, 3);
    CHECK_STR(nodes[0].name, "n1");
    CHECK_INT(nodes[0].gpus, 8);
    CHECK_STR(nodes[0].features, "H100");
    CHECK_INT(nodes[0].drained + nodes[0].down, 0);
    CHECK_INT(nodes[1].drained, 1);
    CHECK_INT(nodes[1].gpus_used, 2);
    CHECK_STR(nodes[1].reason, "PSU swap");
    CHECK_INT(nodes[2].down, 1);
    free(nodes);
    err_clear(&e);
    CHECK_INT(slurm_parse_nodes(sinfo_json, strlen(sinfo_json), "gpu", &nodes, &n, &e), 0);
    CHECK_INT(n, 2);
    free(nodes);
}

static const char squeue_json[] =
    "{\"meta\":{},\"errors\":[],\"jobs\":["
    "{\"job_id\":11,\"job_state\":\"PENDING\",\"state_reason\":\"JobHeldUser\",\"priority\":0,\"partition\":\"ext\","
    "\"user_name\":\"alice\",\"account\":\"vision\",\"name\":\"train\",\"node_count\":2,\"tres_per_node\":\"gres:gpu:8\","
    "\"tres_per_job\":\"\",\"time_limit\":5,\"submit_time\":1795554596,\"start_time\":0,\"end_time\":0,"
    "\"restart_cnt\":0,\"exit_code\":0,\"nodes\":\"\",\"required_nodes\":\"\",\"gres_detail\":[],\"comment\":\"\"},"
    "{\"job_id\":12,\"job_state\":\"PENDING\",\"priority\":0,\"partition\":\"ext\",\"user_name\":\"bob\",\"account\":\"\","
    "\"node_count\":1,\"tres_per_node\":\"\",\"tres_per_job\":\"gres:gpu:3\",\"time_limit\":null},"
    "{\"job_id\":13,\"job_state\":\"RUNNING\",\"priority\":4294901758,\"partition\":\"ext\",\"user_name\":\"bob\","
    "\"account\":\"\",\"node_count\":2,\"tres_per_node\":\"gres:gpu:2\",\"nodes\":\"n[3-4]\","
    "\"gres_detail\":[\"gpu:2(IDX:0-1)\",\"gpu:2(IDX:4-5)\"],\"start_time\":1795554604},"
    "{\"job_id\":14,\"job_state\":\"FAILED\",\"partition\":\"ext\",\"user_name\":\"bob\",\"exit_code\":768},"
    "{\"job_id\":15,\"job_state\":\"FAILED\",\"partition\":\"ext\",\"user_name\":\"bob\",\"exit_code\":9},"
    "{\"job_id\":16,\"job_state\":\"RUNNING\",\"partition\":\"gpu\",\"user_name\":\"carol\"}]}";

static void test_jobs(void)
{
    struct slurm_job *jobs;
    size_t n;
    struct err e;
    err_clear(&e);
    CHECK_INT(slurm_parse_jobs(squeue_json, strlen(squeue_json), "ext", &jobs, &n, &e), 0);
    CHECK_INT(n, 5);
    CHECK_INT(jobs[0].held, 1);
    CHECK_INT(jobs[0].phase, SLURM_PENDING);
    CHECK_INT(jobs[0].gpus, 16);
    CHECK_INT(jobs[0].gpus_per_node, 8);
    CHECK_INT(jobs[0].limit_s, 300); /* minutes in Slurm */
    CHECK_STR(jobs[0].account, "vision");
    CHECK_INT(jobs[1].gpus, 3); /* --gpus=3: per job */
    CHECK_INT(jobs[1].limit_s, -1);
    CHECK_INT(jobs[2].phase, SLURM_ACTIVE);
    CHECK_INT(jobs[2].held, 0);
    CHECK_STR(jobs[2].gres_idx, "n3:0,n3:1,n4:4,n4:5");
    CHECK_INT(jobs[3].phase, SLURM_ENDED);
    CHECK_INT(jobs[3].exit_code, 3);   /* wait status 768: exit 3 */
    CHECK_INT(jobs[4].exit_code, 137); /* killed by signal 9 */
    free(jobs);
}

static void test_errors(void)
{
    struct slurm_job *jobs;
    size_t n;
    struct err e;
    err_clear(&e);
    CHECK_INT(slurm_parse_jobs("{\"jobs\":", 8, NULL, &jobs, &n, &e), -1);
    CHECK(strstr(e.msg, "not JSON") != NULL);
    const char *slurm_error = "{\"errors\":[{\"error\":\"Invalid partition name specified\",\"error_number\":2054}],"
                              "\"jobs\":[]}";
    err_clear(&e);
    CHECK_INT(slurm_parse_jobs(slurm_error, strlen(slurm_error), NULL, &jobs, &n, &e), -1);
    CHECK(strstr(e.msg, "Invalid partition name specified") != NULL);
    err_clear(&e);
    const char *no_id = "{\"jobs\":[{\"job_state\":\"PENDING\"}]}";
    CHECK_INT(slurm_parse_jobs(no_id, strlen(no_id), NULL, &jobs, &n, &e), -1);
    CHECK(strstr(e.msg, "job_id") != NULL);
    struct slurm_node *nodes;
    err_clear(&e);
    CHECK_INT(slurm_parse_nodes("{\"nodes\":{}}", 12, NULL, &nodes, &n, &e), -1);
    CHECK(strstr(e.msg, "'nodes'") != NULL);
}

void suite_agent_slurm_json(void)
{
    test_run("slurm json: host lists", test_hostlist);
    test_run("slurm json: GRES strings", test_gres);
    test_run("slurm json: sinfo nodes of a partition", test_nodes);
    test_run("slurm json: squeue jobs of a partition", test_jobs);
    test_run("slurm json: errors", test_errors);
}
