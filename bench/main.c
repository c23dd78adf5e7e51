/* SPDX-License-Identifier: MIT */
/* qlcshape: the command-line tool (benchmarks and control of a daemon). */
#include <stdio.h>
#include <string.h>

#include "cmds.h"

#ifndef QS_NO_JEMALLOC
/*
 * jemalloc's options for this tool, read at its first allocation: back its
 * large mappings with transparent huge pages (MADV_HUGEPAGE; the kernel's
 * default THP mode, "madvise", serves only those that ask). The simulator
 * is bound by misses in tables of tens of MiB (the engine's block index,
 * the drive model's bandwidth slots), and 2 MiB pages take the TLB misses
 * and most page faults out of them: on the 2-core machine of docs/BENCH.md,
 * 4K random writes simulate about 1.35x faster. With THP off in the kernel
 * this does nothing. MALLOC_CONF in the environment still overrides it.
 */
const char *malloc_conf = "thp:always";
#endif

struct qs_cmd {
	const char *group; /* "bench" or NULL for top-level commands */
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct qs_cmd cmds[] = {
	{"bench", "engine", qs_cmd_bench_engine,
	 "engine benchmark in-process on RAM volumes [--json FILE]"},
	{"bench", "run", qs_cmd_bench_run,
	 "A/B run of a job file, shaping off and on, on the simulator JOB [--json F] ..."},
	{"bench", "ab", qs_cmd_bench_ab, "the default A/B: conf/bench/default.fio, shaping off and on"},
	{"bench", "curve", qs_cmd_bench_curve, "latency against IOPS, 10%..120% of the maximum JOB"},
	{"bench", "trace-export", qs_cmd_bench_trace_export,
	 "a trace as a fio iolog, mapped as the bench replays it TRACE [-o OUT] ..."},
	{"bench", "calibrate", qs_cmd_bench_calibrate, "drive model vs published figures --profile NAME [--json FILE]"},
	{NULL, "stats", qs_cmd_stats,
	 "statistics of a running qlcshaped --config FILE [--json|--prometheus]"},
	{NULL, "policy", qs_cmd_policy,
	 "switch a running qlcshaped's destage policy: policy set NAME [k=v...] --config FILE"},
	{NULL, "drain", qs_cmd_drain, "destage everything a running qlcshaped holds --config FILE"},
	{NULL, "dram", qs_cmd_dram,
	 "the engine's DRAM for a QLC and a log, by part: --profile NAME --log SIZE ..."},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: qlcshape COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char name[64];
		snprintf(name, sizeof(name), "%s%s%s", cmds[i].group ? cmds[i].group : "",
			 cmds[i].group ? " " : "", cmds[i].name);
		fprintf(f, "  %-22s %s\n", name, cmds[i].help);
	}
	fprintf(f, "\n'qlcshape COMMAND --help' describes a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		const struct qs_cmd *c = &cmds[i];
		if (c->group) {
			if (strcmp(argv[1], c->group) || argc < 3 || strcmp(argv[2], c->name))
				continue;
			return c->fn(argc - 2, argv + 2);
		}
		if (!strcmp(argv[1], c->name))
			return c->fn(argc - 1, argv + 1);
	}
	fprintf(stderr, "qlcshape: unknown command '%s%s%s'\n", argv[1], argc > 2 ? " " : "",
		argc > 2 ? argv[2] : "");
	usage(stderr);
	return 2;
}
