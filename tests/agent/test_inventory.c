/* Unit tests: agent/inventory (the fake file, GPU picking, health drains). */
#include <string.h>

#include "agent/inventory.h"
#include "tests/unit/test.h"

void suite_agent_inventory(void);

static const char two_by_eight[] =
    "{\"fleetsim_inventory\":1,\"nodes\":["
    "{\"name\":\"gpu01\",\"gpus\":8,\"model\":\"H100\",\"memory_mib\":81559,\"nvlink_domains\":[[0,1,2,3],[4,5,6,7]]},"
    "{\"name\":\"gpu02\",\"gpus\":[{\"uuid\":\"GPU-aaaa\"},{\"uuid\":\"GPU-bbbb\",\"xid\":79},"
    "{\"uuid\":\"GPU-cccc\",\"ecc_uncorrected\":2}]}]}";

static void test_fake_parse(void)
{
    struct inventory inv;
    inventory_init(&inv);
    struct err e;
    err_clear(&e);
    CHECK_INT(inventory_parse_fake(&inv, "inv.json", two_by_eight, strlen(two_by_eight), &e), 0);
    CHECK_INT(inv.n_nodes, 2);
    CHECK_INT(inv.n_gpus, 11);
    CHECK_STR(inv.gpus[0].uuid, "GPU-fa4e0000-0000-4000-8000-000000000000");
    CHECK_INT(inv.gpus[0].memory_bytes, 81559ULL << 20);
    CHECK_INT(inv.gpus[5].nvlink_domain, 1);
    CHECK_INT(inv.gpus[5].n_peers, 3);
    CHECK_INT(inv.nodes[0].nvlink_domain, 0);
    CHECK_INT(inv.nodes[1].nvlink_domain, -1);
    CHECK_STR(inv.gpus[9].uuid, "GPU-bbbb");
    CHECK_INT(inv.gpus[9].last_xid, 79);
    CHECK_INT(inv.gpus[10].ecc_uncorrected, 2);
    CHECK_INT(inventory_find_gpu(&inv, "GPU-cccc"), 10);
    CHECK_INT(inventory_find_gpu(&inv, "gpu01:3"), 3);
    CHECK_INT(inventory_find_gpu(&inv, "gpu02:1"), 9);
    CHECK_INT(inventory_find_gpu(&inv, "gpu02:3"), -1);
    CHECK_INT(inventory_find_gpu(&inv, "gpu03:0"), -1);
    CHECK_INT(inventory_find_node(&inv, "gpu02"), 1);
    inventory_release(&inv);
}

static void expect_error(const char *text, const char *want)
{
    struct inventory inv;
    inventory_init(&inv);
    struct err e;
    err_clear(&e);
    CHECK_INT(inventory_parse_fake(&inv, "bad.json", text, strlen(text), &e), -1);
    char line[1024];
    err_format(&e, line, sizeof line);
    CHECK_STR(line, want);
    inventory_release(&inv);
}

static void test_fake_errors(void)
{
    expect_error("{\"nodes\":[{\"name\":\"a\",\"gpu\":8}]}",
                 "bad.json: error: nodes[0]: unknown key 'gpu'; did you mean 'gpus'?");
    expect_error("{\"nodes\":[{\"name\":\"a\",\"gpus\":0}]}",
                 "bad.json: error: node 'a': key 'gpus' is 0, expected 1 to 64");
    expect_error("{\"nodes\":[{\"name\":\"a\",\"gpus\":2,\"nvlink_domains\":[[0,2]]}]}",
                 "bad.json: error: node 'a': nvlink_domains[0][1] is not a GPU index 0 to 1");
    expect_error("{\"nodes\":[{\"name\":\"a\",\"gpus\":1},{\"name\":\"a\",\"gpus\":1}]}",
                 "bad.json: error: nodes[1]: node name 'a' given twice");
    expect_error("{\"nodes\":[]}", "bad.json: error: key 'nodes' must be a non-empty list");
    expect_error("{\"nodes\": [", "bad.json:1:11: error: ']' expected near end of file");
    expect_error("{\"fleetsim_inventory\":2,\"nodes\":[{\"name\":\"a\",\"gpus\":1}]}",
                 "bad.json: error: unsupported fleetsim_inventory version 2 (this agent knows 1)");
}

static void test_pick_prefers_a_domain(void)
{
    struct inventory inv;
    inventory_init(&inv);
    struct err e;
    err_clear(&e);
    CHECK_INT(inventory_parse_fake(&inv, "inv.json", two_by_eight, strlen(two_by_eight), &e), 0);
    uint8_t busy[16] = {0};
    int32_t out[8];
    busy[0] = 1; /* domain 0 has 3 free, domain 1 has 4 */
    CHECK_INT(inventory_pick_gpus(&inv, 0, 3, busy, out), 0);
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 3); /* the fullest domain that fits */
    CHECK_INT(inventory_pick_gpus(&inv, 0, 4, busy, out), 0);
    CHECK(out[0] == 4 && out[3] == 7);
    CHECK_INT(inventory_pick_gpus(&inv, 0, 6, busy, out), 0); /* spans: the bigger domain first */
    CHECK(out[0] == 1 && out[1] == 2 && out[2] == 4 && out[5] == 7);
    inv.gpus[5].drained = 1;
    CHECK_INT(inventory_pick_gpus(&inv, 0, 7, busy, out), -1);
    CHECK_INT(inventory_node_usable(&inv, 0), 7);
    inventory_release(&inv);
}

static void test_health_drains(void)
{
    struct inventory inv;
    inventory_init(&inv);
    CHECK_INT(inventory_add_node(&inv, "n", 2), 0);
    int xids[] = {48, 79};
    struct health_rules rules = {xids, 2, 1};
    char why[128] = "";
    struct gpu_health_sample s = {13, 0}; /* XID 13: an application error, not the GPU's */
    CHECK_INT(inventory_health_update(&inv, 0, &s, &rules, why, sizeof why), 0);
    CHECK_INT(inv.gpus[0].last_xid, 13);
    CHECK(!inv.gpus[0].drained);
    s.xid = 79;
    CHECK_INT(inventory_health_update(&inv, 0, &s, &rules, why, sizeof why), 1);
    CHECK_STR(why, "critical xid 79");
    CHECK(inv.gpus[0].drained && inv.gpus[0].auto_drained);
    CHECK_INT(inventory_health_update(&inv, 0, &s, &rules, why, sizeof why), 0); /* already drained */
    struct gpu_health_sample ecc = {0, 3};
    CHECK_INT(inventory_health_update(&inv, 1, &ecc, &rules, why, sizeof why), 1);
    CHECK_STR(why, "3 uncorrectable ecc errors");
    /* an admin resumes: the errors so far are acknowledged, new ones drain again */
    inv.gpus[1].drained = 0;
    inv.gpus[1].ecc_baseline = 3;
    CHECK_INT(inventory_health_update(&inv, 1, &ecc, &rules, why, sizeof why), 0);
    ecc.ecc_uncorrected = 4;
    CHECK_INT(inventory_health_update(&inv, 1, &ecc, &rules, why, sizeof why), 1);
    /* ECC rule off; unknown counts never drain */
    inv.gpus[1].drained = 0;
    rules.drain_on_ecc = 0;
    ecc.ecc_uncorrected = 9;
    CHECK_INT(inventory_health_update(&inv, 1, &ecc, &rules, why, sizeof why), 0);
    inventory_release(&inv);
}

void suite_agent_inventory(void)
{
    test_run("inventory: fake file", test_fake_parse);
    test_run("inventory: fake file errors", test_fake_errors);
    test_run("inventory: GPU picking prefers one NVLink domain", test_pick_prefers_a_domain);
    test_run("inventory: XID and ECC drain logic", test_health_drains);
}
