/* Tests of scenarios/: the examples load with the values they say, the
 * built-in catalog is complete and sane, defaults come from the schema, each
 * kind of error reads exactly as documented, and the schema table is
 * consistent with the models' own name parsers. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim/suggest.h"
#include "models/distribution.h"
#include "models/fabric.h"
#include "models/failures.h"
#include "scenarios/catalog.h"
#include "scenarios/reader.h"
#include "scenarios/scenario.h"
#include "scenarios/schema.h"
#include "tests/unit/suites.h"
#include "tests/unit/reader_case.h"
#include "tests/unit/test.h"

struct scn_case {
    struct scenario s;
    struct diag_list d;
    struct err e;
    int rc;
};

static void scn_load_text(struct scn_case *c, const char *text)
{
    scenario_init(&c->s);
    diag_list_init(&c->d, 100);
    err_clear(&c->e);
    c->rc = scenario_load_buffer("t.yaml", text, strlen(text), &c->s, &c->d, &c->e);
}

static void scn_load_file(struct scn_case *c, const char *path)
{
    scenario_init(&c->s);
    diag_list_init(&c->d, 100);
    err_clear(&c->e);
    c->rc = scenario_load(path, &c->s, &c->d, &c->e);
    if (c->rc != 0)
        for (size_t i = 0; i < c->d.n; i++)
            printf("  %s:%ld:%ld: %s\n", c->d.items[i].file, c->d.items[i].line, c->d.items[i].col,
                   c->d.items[i].msg);
}

static void scn_release(struct scn_case *c)
{
    scenario_release(&c->s);
    diag_list_release(&c->d);
}

/* Loads text, which must fail with exactly the diagnostic want (and err
 * holding the first error). */
static void expect_error(const char *text, const char *want)
{
    struct scn_case c;
    scn_load_text(&c, text);
    CHECK(c.rc != 0);
    CHECK(has_diag(&c.d, want));
    CHECK(c.e.set);
    scn_release(&c);
}

#define MINIMAL "cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 2}\n"

/* ---- the examples ---- */

static void test_example_gpu_cluster(void)
{
    struct scn_case c;
    scn_load_file(&c, "scenarios/examples/gpu-cluster.yaml");
    const struct scenario *s = &c.s;
    if (!CHECK_INT(c.rc, 0)) {
        scn_release(&c);
        return;
    }
    CHECK_INT(s->seed, 42);
    CHECK_INT(s->start_unix_s, INT64_C(1798761600)); /* 2027-01-01 */
    CHECK_INT(s->n_partitions, 2);
    CHECK_STR(s->partitions[0].name, "train");
    CHECK_INT(s->partitions[0].nodes, 48);
    CHECK_STR(s->catalog.types[s->partitions[1].type].name, "H100-SXM");
    CHECK_INT(scenario_initial_gpus(s), 512);
    CHECK_NEAR(s->catalog.types[node_catalog_find(&s->catalog, "H100-SXM")].price_usd, 250000, 0);
    CHECK_INT(s->fabric.kind, FABRIC_FAT_TREE);
    CHECK_INT(s->fabric.nodes_per_leaf, 16);
    CHECK_INT(s->fabric.leaves_per_pod, 4);
    CHECK_NEAR(s->fabric.oversubscription, 2.0, 0);
    CHECK_NEAR(s->fabric.link_gbps, 400, 0);
    CHECK_NEAR(s->comm_fraction[JOB_CLASS_TRAINING], 0.25, 0);
    CHECK(s->failures.enabled);
    CHECK_INT(s->failures.n_categories, 18);
    CHECK_STR(s->failures.categories[0].name, "faulty gpu");
    CHECK_INT(s->failures.categories[0].repair_s.kind, DIST_LOGNORMAL);
    CHECK_NEAR(s->failures.categories[0].repair_s.a, 12 * 3600.0, 0);
    CHECK_NEAR(s->failures.categories[0].rate_per_unit_hour, 148.0 / (16384.0 * 1296.0), 1e-15);
    CHECK_NEAR(s->failures.checkpoint[JOB_CLASS_FINETUNE].interval_s, 3600, 0);
    CHECK_NEAR(s->failures.checkpoint[JOB_CLASS_FINETUNE].overhead_s, 30, 0);
    /* 419 interruptions in 54 days on 16,384 GPUs, scaled to 512 GPUs */
    CHECK_NEAR(scenario_expected_failures_per_day(s), 419.0 / 54 * 512 / 16384, 1e-9);
    CHECK_INT(s->procurement.n_orders, 1);
    const struct purchase_order *o = &s->procurement.orders[0];
    CHECK_INT(o->order_us, INT64_C(31) * 86400 * 1000000);
    CHECK_STR(s->catalog.types[o->type].name, "H200-SXM");
    CHECK_INT(o->count, 32);
    CHECK_INT(o->lead_time_s.kind, DIST_UNIFORM);
    CHECK_NEAR(o->lead_time_s.a, 20 * 7 * 86400.0, 0);
    CHECK_NEAR(o->lead_time_s.b, 30 * 7 * 86400.0, 0);
    CHECK_NEAR(o->burn_in_s, 7 * 86400.0, 0);
    CHECK_INT(c.d.n, 0);
    scn_release(&c);
}

static void test_example_tiny_defaults(void)
{
    struct scn_case c;
    scn_load_file(&c, "scenarios/examples/tiny.yaml");
    const struct scenario *s = &c.s;
    CHECK_INT(c.rc, 0);
    CHECK_INT(s->seed, 1);
    CHECK_INT(s->start_unix_s, 0);
    CHECK_INT(scenario_initial_gpus(s), 16);
    CHECK_INT(s->fabric.kind, FABRIC_NONE);
    CHECK_INT(s->fabric.nodes_per_leaf, 32);
    CHECK_INT(s->fabric.leaves_per_pod, 8);
    CHECK_NEAR(s->fabric.oversubscription, 1, 0);
    CHECK_NEAR(s->fabric.link_gbps, 400, 0);
    CHECK_INT(s->default_class, JOB_CLASS_TRAINING);
    CHECK_NEAR(s->comm_fraction[JOB_CLASS_TRAINING], 0.2, 0);
    CHECK_NEAR(s->comm_fraction[JOB_CLASS_FINETUNE], 0.1, 0);
    CHECK_NEAR(s->comm_fraction[JOB_CLASS_INFERENCE], 0, 0);
    CHECK(!s->failures.enabled);
    CHECK_INT(s->failures.n_categories, 0);
    CHECK_NEAR(s->failures.checkpoint[JOB_CLASS_TRAINING].interval_s, 1800, 0);
    CHECK_NEAR(s->failures.checkpoint[JOB_CLASS_TRAINING].overhead_s, 60, 0);
    /* the schema's defaults are failure_spec_init's */
    struct failure_spec fs;
    failure_spec_init(&fs);
    for (int k = 0; k < JOB_CLASS_COUNT; k++) {
        CHECK_NEAR(s->failures.checkpoint[k].interval_s, fs.checkpoint[k].interval_s, 0);
        CHECK_NEAR(s->failures.checkpoint[k].overhead_s, fs.checkpoint[k].overhead_s, 0);
    }
    CHECK_INT(s->procurement.n_orders, 0);
    CHECK_NEAR(scenario_expected_failures_per_day(s), 0, 0);
    scn_release(&c);
}

/* A section that is present but empty takes every default, and failures
 * become enabled (with a preset to have categories). */
static void test_sections_present_defaults(void)
{
    struct scn_case c;
    scn_load_text(&c, MINIMAL "runtime:\nfailures:\n  preset: llama3\n  distribution: weibull\n"
                              "  weibull_shape: 0.8\n  checkpoint:\n    training: {interval: 2h}\n");
    CHECK_INT(c.rc, 0);
    CHECK(c.s.failures.enabled);
    CHECK_INT(c.s.failures.n_categories, 18);
    CHECK_NEAR(c.s.failures.weibull_shape, 0.8, 0);
    CHECK_NEAR(c.s.failures.checkpoint[JOB_CLASS_TRAINING].interval_s, 7200, 0);
    CHECK_NEAR(c.s.failures.checkpoint[JOB_CLASS_TRAINING].overhead_s, 60, 0);
    scn_release(&c);
    scn_load_text(&c, MINIMAL "failures:\n  enabled: false\n");
    CHECK_INT(c.rc, 0);
    CHECK(!c.s.failures.enabled);
    scn_release(&c);
}

static void test_overrides_and_new_types(void)
{
    struct scn_case c;
    scn_load_text(&c, "node_types:\n"
                      "  - name: B200\n    speed: {inference: 3.0}\n"
                      "  - name: MI300X\n    gpus: 8\n    nvlink_domain_gpus: 8\n    nvlink_bandwidth: 896GB/s\n"
                      "    gpu_memory: 192GB\n    power: 10kW\n    price_usd: $200k\n"
                      "    speed: {training: 0.9, finetune: 0.9, inference: 1.1}\n"
                      "cluster:\n  partitions:\n    - {name: a, node_type: MI300X, nodes: 3}\n"
                      "failures:\n  categories:\n    - name: psu\n      scope: node\n"
                      "      rate_per_unit_hour: 1e-5\n      repair: 4h\n"
                      "procurement:\n  retirements:\n    - {at: 30d, node_type: MI300X, count: 3}\n");
    CHECK_INT(c.rc, 0);
    const struct node_catalog *cat = &c.s.catalog;
    int b = node_catalog_find(cat, "B200"), m = node_catalog_find(cat, "MI300X");
    CHECK(b >= 0 && m >= 0);
    if (b >= 0 && m >= 0) {
        CHECK_NEAR(cat->types[b].speed[JOB_CLASS_INFERENCE], 3.0, 0);
        CHECK_NEAR(cat->types[b].speed[JOB_CLASS_TRAINING], 2.0, 0); /* kept from the catalog */
        CHECK_NEAR(cat->types[m].nvlink_gbps, 7168, 1e-9);
        CHECK_NEAR(cat->types[m].gpu_memory_gib, 192e9 / 1073741824.0, 1e-9);
        CHECK_NEAR(cat->types[m].price_usd, 200000, 0);
        CHECK_NEAR(cat->types[m].power_w, 10000, 0);
    }
    CHECK_INT(c.s.failures.n_categories, 1);
    CHECK_INT(c.s.failures.categories[0].repair_s.kind, DIST_FIXED);
    CHECK_NEAR(c.s.failures.categories[0].repair_s.a, 14400, 0);
    CHECK_INT(c.s.procurement.n_retirements, 1);
    CHECK_INT(c.s.procurement.retirements[0].at_us, INT64_C(30) * 86400 * 1000000);
    scn_release(&c);
}

/* ---- the built-in catalog ---- */

static void test_builtin_catalog(void)
{
    static const char *const names[] = {"A100-80GB-SXM", "H100-SXM", "H200-SXM", "B200", "GB200-NVL72", "L40S"};
    struct node_catalog cat;
    struct diag_list d;
    struct err e;
    node_catalog_init(&cat);
    diag_list_init(&d, 50);
    err_clear(&e);
    CHECK_INT(catalog_load_builtin(&cat, &d, &e), 0);
    CHECK_INT(d.n, 0);
    CHECK_INT(cat.n, 6);
    for (size_t i = 0; i < 6; i++) {
        int at = node_catalog_find(&cat, names[i]);
        if (!CHECK(at >= 0))
            continue;
        const struct node_type *t = &cat.types[at];
        CHECK(t->gpus >= 4 && t->gpus <= 8);
        CHECK(t->nvlink_domain_gpus == 0 || t->nvlink_domain_gpus % t->gpus == 0);
        CHECK(t->nvlink_gbps >= 500 && t->nvlink_gbps <= 15000);
        CHECK(t->gpu_memory_gib >= 40 && t->gpu_memory_gib <= 200);
        CHECK(t->power_w >= 4000 && t->power_w <= 15000);
        CHECK(t->price_usd > 0);
        for (int k = 0; k < JOB_CLASS_COUNT; k++)
            CHECK(t->speed[k] >= 0.2 && t->speed[k] <= 4);
    }
    const struct node_type *h100 = &cat.types[node_catalog_find(&cat, "H100-SXM")];
    for (int k = 0; k < JOB_CLASS_COUNT; k++)
        CHECK_NEAR(h100->speed[k], 1.0, 0); /* the reference */
    CHECK_NEAR(h100->nvlink_gbps, 7200, 0);
    CHECK_INT(h100->nvlink_domain_gpus, 8);
    CHECK_NEAR(h100->gpu_memory_gib, 80, 0);
    const struct node_type *gb = &cat.types[node_catalog_find(&cat, "GB200-NVL72")];
    CHECK_INT(gb->gpus, 4);
    CHECK_INT(gb->nvlink_domain_gpus, 72);
    const struct node_type *l40s = &cat.types[node_catalog_find(&cat, "L40S")];
    CHECK_INT(l40s->nvlink_domain_gpus, 0);
    CHECK_NEAR(l40s->nvlink_gbps, 512, 0); /* PCIe Gen4 x16 */
    node_catalog_release(&cat);
    diag_list_release(&d);
}

/* ---- errors, one of each kind, exact text ---- */

static void test_error_unknown_key(void)
{
    expect_error(MINIMAL "  fabric:\n    kind: fat-tree\n    nodes_per_leef: 16\n",
                 "t.yaml:6:5: error: unknown key 'nodes_per_leef' in 'cluster.fabric'; did you mean 'nodes_per_leaf'?");
    expect_error("sead: 4\n" MINIMAL, "t.yaml:1:1: error: unknown key 'sead'; did you mean 'seed'?");
    expect_error(MINIMAL "zzzz: 1\n", "t.yaml:4:1: error: unknown key 'zzzz'");
}

static void test_error_types(void)
{
    expect_error("seed: abc\n" MINIMAL, "t.yaml:1:7: error: key 'seed' must be an integer, not 'abc'");
    expect_error("seed: \"4\"\n" MINIMAL, "t.yaml:1:7: error: key 'seed' must be an integer, not the string '4'");
    expect_error("cluster:\n  partitions:\n    name: a\n",
                 "t.yaml:3:5: error: key 'cluster.partitions' must be a list, not a mapping");
    expect_error(MINIMAL "failures:\n  enabled: yes\n",
                 "t.yaml:5:12: error: key 'failures.enabled' must be true or false, not 'yes'");
    expect_error(MINIMAL "runtime:\n  default_class: [a]\n",
                 "t.yaml:5:18: error: key 'runtime.default_class' must be a single value, not a list");
    expect_error(MINIMAL "seed:\n", "t.yaml:4:6: error: key 'seed' has no value");
}

static void test_error_ranges_and_units(void)
{
    expect_error("cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 0}\n",
                 "t.yaml:3:45: error: key 'cluster.partitions[0].nodes' is 0, expected 1 to 1000000");
    expect_error(MINIMAL "  fabric: {kind: fat-tree, oversubscription: 0.5}\n",
                 "t.yaml:4:46: error: key 'cluster.fabric.oversubscription' is 0.5, expected 1 to 64");
    expect_error(MINIMAL "  fabric: {kind: fat-tree, link: 0Gbps}\n",
                 "t.yaml:4:34: error: key 'cluster.fabric.link' is 0Gbps, expected more than 0 Gbps and at most "
                 "100000 Gbps");
    expect_error(MINIMAL "  fabric: {kind: fat-tree, link: 400}\n",
                 "t.yaml:4:34: error: key 'cluster.fabric.link' is '400', expected a bandwidth with a unit (bps, "
                 "Kbps, Mbps, Gbps, Tbps, or bytes: B/s, KB/s, MB/s, GB/s, TB/s), e.g. '400Gbps'");
    expect_error(MINIMAL "procurement:\n  orders:\n    - {at: 4w, node_type: B200, count: 1, lead_time: 26}\n",
                 "t.yaml:6:54: error: key 'procurement.orders[0].lead_time' is '26', expected a duration with a "
                 "unit (us, ms, s, m, min, h, d, w, y), e.g. '90d'");
    expect_error("start_date: 2027-02-29\n" MINIMAL, "t.yaml:1:13: error: key 'start_date' is '2027-02-29', not a valid date");
    expect_error(MINIMAL "  fabric: {kind: fat_tree}\n",
                 "t.yaml:4:18: error: key 'cluster.fabric.kind' is 'fat_tree', expected none, fat-tree or "
                 "rail-optimized; did you mean 'fat-tree'?");
}

static void test_error_references(void)
{
    expect_error("cluster:\n  partitions:\n    - {name: a, node_type: H100-SMX, nodes: 2}\n",
                 "t.yaml:3:28: error: unknown node type 'H100-SMX'; did you mean 'H100-SXM'?");
    expect_error("cluster:\n  partitions:\n    - {name: a, node_type: TPU, nodes: 2}\n",
                 "t.yaml:3:28: error: unknown node type 'TPU' (known: A100-80GB-SXM, H100-SXM, H200-SXM, B200, "
                 "GB200-NVL72, L40S)");
    expect_error("cluster:\n  partitions:\n    - {name: a, node_type: B200, nodes: 2}\n"
                 "    - {name: a, node_type: B200, nodes: 2}\n",
                 "t.yaml:4:14: error: duplicate partition name 'a' (first at line 3)");
    expect_error("seed: 1\nseed: 2\n" MINIMAL, "t.yaml:2:1: error: duplicate key 'seed' (first at line 1)");
    expect_error("seed: 1\n", "t.yaml:1:1: error: missing key 'cluster'");
}

static void test_error_cross_field(void)
{
    expect_error(MINIMAL "procurement:\n  orders:\n    - {at: 2027-02-01, node_type: B200, count: 1, lead_time: 26w}\n",
                 "t.yaml:6:12: error: key 'procurement.orders[0].at' is the date '2027-02-01', which needs "
                 "'start_date' (or write a duration from the start, e.g. '4w')");
    expect_error("start_date: 2027-01-01\n" MINIMAL
                 "procurement:\n  orders:\n    - {at: 2026-12-01, node_type: B200, count: 1, lead_time: 26w}\n",
                 "t.yaml:7:12: error: key 'procurement.orders[0].at' is 2026-12-01, before start_date");
    expect_error(MINIMAL "failures:\n  preset: llama3\n  distribution: weibull\n",
                 "t.yaml:5:3: error: missing key 'weibull_shape' in 'failures' (needed with distribution 'weibull')");
    expect_error(MINIMAL "failures:\n  preset: llama3\n  weibull_shape: 0.7\n",
                 "t.yaml:6:18: error: key 'failures.weibull_shape' applies only with distribution 'weibull', not "
                 "'exponential'");
    expect_error(MINIMAL "procurement:\n  orders:\n    - at: 1w\n      node_type: B200\n      count: 1\n"
                         "      lead_time: {distribution: uniform, lo: 30w, hi: 20w}\n",
                 "t.yaml:9:46: error: key 'procurement.orders[0].lead_time.lo' (30w) is greater than "
                 "'procurement.orders[0].lead_time.hi' (20w)");
    expect_error(MINIMAL "procurement:\n  orders:\n    - {at: 1w, node_type: B200, count: 1, lead_time: {distribution: "
                         "exponential, mean: 20w, sigma: 1}}\n",
                 "t.yaml:6:93: error: key 'procurement.orders[0].lead_time.sigma' does not apply to distribution "
                 "'exponential' (it takes 'mean')");
    expect_error(MINIMAL "procurement:\n  retirements:\n    - {at: 1w, node_type: H100-SXM, count: 3}\n",
                 "t.yaml:6:44: error: retirement of 3 'H100-SXM' nodes is more than the 2 there can be then (2 "
                 "initial, 0 ordered, 0 retired before)");
    expect_error(MINIMAL "failures:\n  checkpoint:\n    training: {interval: 10m, overhead: 10m}\n",
                 "t.yaml:6:41: error: key 'failures.checkpoint.training.overhead' is 10m, expected less than the "
                 "interval (10m)");
    expect_error(MINIMAL "failures:\n  enabled: true\n",
                 "t.yaml:4:1: error: failures are enabled but there are no categories (add 'preset: llama3' or "
                 "'categories')");
}

static void test_error_yaml_syntax(void)
{
    expect_error("cluster:\n  partitions: [\n", "t.yaml:3:1: error: invalid yaml: did not find expected node content "
                                                  "while parsing a flow node (from line 3, column 1)");
    expect_error("", "t.yaml: error: empty scenario: no keys");
    expect_error("- 1\n", "t.yaml:1:1: error: a scenario must be a mapping of keys, not a list");
}

/* Many errors: every one up to the cap, then one line saying it stopped. */
static void test_error_cap(void)
{
    char text[8192] = MINIMAL;
    for (int i = 0; i < 80; i++) {
        size_t len = strlen(text);
        snprintf(text + len, sizeof text - len, "bogus%d: 1\n", i);
    }
    struct scn_case c;
    scn_load_text(&c, text);
    CHECK(c.rc != 0);
    CHECK_INT(c.d.n, READER_MAX_ERRORS + 1);
    CHECK(has_diag(&c.d, "t.yaml: error: too many errors; stopped after 50"));
    CHECK(has_diag(&c.d, "t.yaml:4:1: error: unknown key 'bogus0'"));
    scn_release(&c);
}

/* Every problem in a file is listed, in file order, and err holds the first. */
static void test_error_all_listed(void)
{
    struct scn_case c;
    scn_load_text(&c, "seed: x\ncluster:\n  partitions:\n    - {name: a, node_type: Q, nodes: -1}\n"
                      "  fabric: {kind: mesh}\n");
    CHECK_INT(c.d.n, 4);
    for (size_t i = 1; i < c.d.n; i++)
        CHECK(c.d.items[i - 1].line <= c.d.items[i].line);
    CHECK_INT(c.e.line, 1);
    CHECK_INT(c.e.col, 7);
    scn_release(&c);
}

static void test_warning_no_fabric(void)
{
    struct scn_case c;
    scn_load_text(&c, MINIMAL "  fabric:\n    link: 200Gbps\n");
    CHECK_INT(c.rc, 0);
    CHECK(has_diag(&c.d, "t.yaml:5:5: warning: key 'cluster.fabric.link' has no effect with fabric kind 'none'"));
    scn_release(&c);
}

static void test_cannot_read(void)
{
    struct scn_case c;
    scn_load_file(&c, "tests/does-not-exist.yaml");
    CHECK(c.rc != 0);
    CHECK_INT(c.d.n, 0);
    CHECK(strstr(c.e.msg, "cannot read") != NULL);
    scn_release(&c);
}

/* Issue 11: null values are checked like empty mappings; a Weibull shape
 * GSL cannot take the Gamma of is refused (GSL's handler stays as the host
 * set it: the unit tests leave GSL's aborting default on); nesting is bounded. */
static void test_null_and_library_limits(void)
{
    struct scn_case c;
    scn_load_text(&c, "cluster:\n");
    CHECK(c.rc != 0);
    CHECK(has_diag(&c.d, "t.yaml:1:9: error: missing key 'partitions' in 'cluster'"));
    scn_release(&c);
    scn_load_text(&c, "~\n");
    CHECK(has_diag(&c.d, "t.yaml:1:1: error: missing key 'cluster'"));
    scn_release(&c);
    scn_load_text(&c, "cluster:\n  partitions:\n    - {name: a, node_type: H100-SXM, nodes: 2}\n"
                      "failures:\n  preset: llama3\n  distribution: weibull\n  weibull_shape: 0.005\n");
    CHECK(c.rc != 0);
    CHECK(c.d.n == 1 && strstr(c.d.items[0].msg, "key 'failures.weibull_shape' is 0.005, too small") != NULL);
    scn_release(&c);
    char deep[400];
    memset(deep, '[', 200);
    memcpy(deep, "cluster: ", 9);
    deep[200] = '\0';
    scn_load_text(&c, deep);
    CHECK(has_diag(&c.d, "t.yaml:1:73: error: nested more than 64 levels deep (the limit)"));
    scn_release(&c);
}

/* ---- the schema table ---- */

static void test_nearest_key(void)
{
    CHECK_STR(schema_nearest_key("cluster.fabric", "nodes_per_leef"), "nodes_per_leaf");
    CHECK_STR(schema_nearest_key("cluster.fabric", "Link"), "link");
    CHECK_STR(schema_nearest_key("", "clustr"), "cluster");
    CHECK_STR(schema_nearest_key("cluster.partitions[]", "node_typ"), "node_type");
    CHECK(schema_nearest_key("cluster.fabric", "zzz") == NULL);
    CHECK(schema_nearest_key("failures.categories[]", "rack") == NULL);
    CHECK_INT(suggest_distance("kitten", "sitting"), 3);
}

/* Enum values are spelled as the models parse them; defaults convert and lie
 * in range; every row's parent exists. A broken row fails here, not in a
 * user's scenario. */
static void test_schema_consistent(void)
{
    for (size_t i = 0; i < schema_key_count; i++) {
        const struct schema_key *k = &schema_keys[i];
        struct schema_value v;
        char msg[512];
        if (k->def && !CHECK(schema_convert(k, k->path, k->def, 0, &v, msg, sizeof msg) == 0))
            printf("  default of %s: %s\n", k->path, msg);
        char parent[READER_PATH_MAX];
        snprintf(parent, sizeof parent, "%s", k->path);
        char *cut = strrchr(parent, '.');
        char *br = strstr(parent, "[]");
        if (br && (!cut || br > cut))
            *br = '\0'; /* "a[]" belongs to the list "a" */
        else if (cut)
            *cut = '\0';
        else
            parent[0] = '\0';
        if (parent[0] && !CHECK(schema_find(parent) != NULL))
            printf("  %s has no parent row %s\n", k->path, parent);
        if (k->type == SCHEMA_LIST) {
            char item[READER_PATH_MAX];
            snprintf(item, sizeof item, "%s[]", k->path);
            CHECK(schema_find(item) != NULL);
        }
    }
    struct {
        const char *path;
        int (*ok)(const char *);
    } enums[] = {{"cluster.fabric.kind", NULL}, {"runtime.default_class", NULL}, {"failures.categories[].scope", NULL},
                 {"failures.categories[].repair.distribution", NULL}};
    for (size_t i = 0; i < sizeof enums / sizeof *enums; i++) {
        const struct schema_key *k = schema_find(enums[i].path);
        if (!CHECK(k && k->type == SCHEMA_ENUM))
            continue;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", k->values);
        for (char *name = strtok(buf, "|"); name; name = strtok(NULL, "|")) {
            enum fabric_kind fk;
            enum job_class jc;
            enum failure_scope fs;
            enum distribution_kind dk;
            int rc = i == 0 ? fabric_kind_parse(name, &fk)
                     : i == 1 ? job_class_parse(name, &jc)
                     : i == 2 ? failure_scope_parse(name, &fs)
                              : distribution_kind_parse(name, &dk);
            if (!CHECK_INT(rc, 0))
                printf("  %s value '%s' is not parsed by its model\n", enums[i].path, name);
        }
    }
}

static void test_aliases(void)
{
    struct scn_case c;
    scn_load_text(&c, "cluster:\n  partitions:\n    - &p {name: a, node_type: B200, nodes: 2}\n"
                      "    - {name: b, node_type: B200, nodes: 3}\n"
                      "procurement:\n  orders:\n    - &o {at: 1w, node_type: B200, count: 1, lead_time: 8w}\n    - *o\n");
    CHECK_INT(c.rc, 0);
    CHECK_INT(c.s.procurement.n_orders, 2);
    scn_release(&c);
}

void suite_scenario(void)
{
    test_run("scenario example gpu-cluster", test_example_gpu_cluster);
    test_run("scenario example tiny and defaults", test_example_tiny_defaults);
    test_run("scenario empty sections take defaults", test_sections_present_defaults);
    test_run("scenario node type overrides and additions", test_overrides_and_new_types);
    test_run("scenario builtin catalog", test_builtin_catalog);
    test_run("scenario error unknown key", test_error_unknown_key);
    test_run("scenario error types", test_error_types);
    test_run("scenario error ranges and units", test_error_ranges_and_units);
    test_run("scenario error references", test_error_references);
    test_run("scenario error cross-field rules", test_error_cross_field);
    test_run("scenario error yaml syntax", test_error_yaml_syntax);
    test_run("scenario error cap", test_error_cap);
    test_run("scenario every error listed", test_error_all_listed);
    test_run("scenario warning fabric none", test_warning_no_fabric);
    test_run("scenario cannot read", test_cannot_read);
    test_run("scenario null values, Weibull shape, nesting", test_null_and_library_limits);
    test_run("scenario nearest key", test_nearest_key);
    test_run("scenario schema consistent", test_schema_consistent);
    test_run("scenario aliases", test_aliases);
}
