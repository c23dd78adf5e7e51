/* SPDX-License-Identifier: MIT */
/*
 * qlcshape dram: the engine's DRAM for a configuration and two devices,
 * by part, before anything is built (qs_engine_dram_plan, the plan the
 * engine itself splits engine.dram_limit with), for sizing a node: one
 * instance and N of them. The engine settings are the defaults, those of
 * a daemon config file (--config), then the options; the devices are
 * sizes, or a drive profile's capacity and IU.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/profile.h"
#include "qlcshape/engine.h"
#include "qlcshape/format.h"
#include "cmds.h"

struct dram_opts {
	const char *config, *profile;
	uint64_t qlc, fast, log, dram_limit, map_dram, band;
	uint32_t iu, instances, op_pct;
	int placement; /* -1: as configured */
};

static int dram_usage(FILE *f)
{
	fprintf(f,
		"usage: qlcshape dram (--qlc-size SIZE | --profile NAME) (--log SIZE | --fast-size SIZE)\n"
		"       [--placement inplace|log] [--dram-limit SIZE] [--map-dram SIZE]\n"
		"       [--band-size SIZE] [--op-pct N] [--iu SIZE] [--config FILE] [--instances N]\n"
		"  The engine's DRAM for those devices, by part, as qlcshaped will allocate it\n"
		"  (an engine just opened: dirty-IU records grow beyond the pool shown when\n"
		"  dirty IUs are sparse), and for N instances. Engine settings: the defaults,\n"
		"  then the [engine] keys of --config, then these options.\n"
		"  --qlc-size SIZE    the QLC drive's capacity (bytes, or K/M/G/T: powers of 1024)\n"
		"  --profile NAME     or a drive profile's capacity and IU (conf/profiles)\n"
		"  --log SIZE         the log; the fast device also holds log placement's map\n"
		"                     region and clean state, which are added to it\n"
		"  --fast-size SIZE   or the fast device's whole size\n"
		"  --placement P      inplace or log\n"
		"  --dram-limit SIZE  engine.dram_limit (default: the engine's, auto); the\n"
		"                     log's window, dirty IUs and map pages share it\n"
		"  --map-dram SIZE    engine.map_dram_limit, with no budget (not with\n"
		"                     --dram-limit)\n"
		"  --band-size SIZE   engine.band_size     --op-pct N  engine.op_pct\n"
		"  --iu SIZE          devices.iu (default: the profile's, else 64K)\n"
		"  --instances N      also the total for N instances (default 1)\n");
	return f == stdout ? 0 : 2;
}

static int dram_size(const char *opt, const char *v, uint64_t *out)
{
	if (qs_config_parse_size(v, out) || !*out) {
		fprintf(stderr, "qlcshape dram: --%s '%s': expected a size above 0 (bytes, or K, M, "
				"G, T)\n", opt, v);
		return -EINVAL;
	}
	return 0;
}

static int dram_parse(int argc, char **argv, struct dram_opts *o)
{
	static const struct option opts[] = {
		{"qlc-size", required_argument, NULL, 'q'},
		{"profile", required_argument, NULL, 'p'},
		{"log", required_argument, NULL, 'l'},
		{"fast-size", required_argument, NULL, 'f'},
		{"placement", required_argument, NULL, 'P'},
		{"dram-limit", required_argument, NULL, 'd'},
		{"map-dram", required_argument, NULL, 'm'},
		{"band-size", required_argument, NULL, 'b'},
		{"op-pct", required_argument, NULL, 'o'},
		{"iu", required_argument, NULL, 'i'},
		{"config", required_argument, NULL, 'c'},
		{"instances", required_argument, NULL, 'n'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	uint64_t v;
	int c, rc = 0;
	memset(o, 0, sizeof(*o));
	o->instances = 1;
	o->placement = -1;
	optind = 1;
	while (!rc && (c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		const char *name = NULL;
		for (const struct option *x = opts; x->name; x++)
			if (x->val == c)
				name = x->name;
		switch (c) {
		case 'q': rc = dram_size(name, optarg, &o->qlc); break;
		case 'l': rc = dram_size(name, optarg, &o->log); break;
		case 'f': rc = dram_size(name, optarg, &o->fast); break;
		case 'd': rc = dram_size(name, optarg, &o->dram_limit); break;
		case 'm': rc = dram_size(name, optarg, &o->map_dram); break;
		case 'b': rc = dram_size(name, optarg, &o->band); break;
		case 'i':
			rc = dram_size(name, optarg, &v);
			o->iu = (uint32_t)v;
			break;
		case 'p': o->profile = optarg; break;
		case 'c': o->config = optarg; break;
		case 'P': {
			enum qs_placement p;
			if (qs_placement_parse(optarg, &p)) {
				fprintf(stderr, "qlcshape dram: --placement '%s': expected inplace or log\n",
					optarg);
				return -EINVAL;
			}
			o->placement = (int)p;
			break;
		}
		case 'o':
		case 'n': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || !n || n > 100000) {
				fprintf(stderr, "qlcshape dram: --%s '%s': expected a whole number, 1 to "
						"100000\n", name, optarg);
				return -EINVAL;
			}
			*(c == 'o' ? &o->op_pct : &o->instances) = (uint32_t)n;
			break;
		}
		case 'h': exit(dram_usage(stdout));
		default: return -EINVAL;
		}
	}
	if (rc)
		return rc;
	if (optind < argc || !(o->qlc || o->profile) || (o->qlc && o->profile) ||
	    !(o->log || o->fast) || (o->log && o->fast) || (o->dram_limit && o->map_dram)) {
		fprintf(stderr, "qlcshape dram: give one of --qlc-size and --profile, one of --log "
				"and --fast-size, and not both --dram-limit and --map-dram\n");
		return -EINVAL;
	}
	return 0;
}

/* The engine settings: defaults, the config file's keys, the options. */
static int dram_conf(const struct dram_opts *o, struct qs_engine_conf *ec, uint64_t *qlc)
{
	char err[512];
	qs_engine_conf_default(ec);
	ec->iu_bytes = 65536;
	*qlc = o->qlc;
	if (o->profile) {
		char path[4096];
		struct qs_profile p;
		qs_profile_path(o->profile, path, sizeof(path));
		if (qs_profile_load(path, &p, err, sizeof(err))) {
			fprintf(stderr, "qlcshape dram: %s\n", err);
			return -EINVAL;
		}
		*qlc = p.capacity_bytes;
		ec->iu_bytes = p.iu_bytes;
	}
	if (o->config) {
		struct qs_config c;
		if (qs_config_load(&c, o->config, err, sizeof(err))) {
			fprintf(stderr, "qlcshape dram: %s\n", err);
			return -EINVAL;
		}
		qs_config_engine_conf(&c, ec);
		if (c.iu_bytes)
			ec->iu_bytes = c.iu_bytes;
		qs_config_free(&c);
	}
	if (o->iu)
		ec->iu_bytes = o->iu;
	if (o->placement >= 0)
		ec->placement = (enum qs_placement)o->placement;
	if (o->dram_limit)
		ec->dram_limit = o->dram_limit;
	if (o->map_dram) {
		ec->map_dram_limit = o->map_dram;
		ec->dram_limit = 0;
	}
	if (o->band)
		ec->band_bytes = o->band;
	if (o->op_pct)
		ec->op_pct = o->op_pct;
	struct qs_conf_err why;
	if (qs_engine_conf_check_qlc(ec, *qlc, &why)) {
		fprintf(stderr, "qlcshape dram: engine settings: %s\n", why.msg);
		return -EINVAL;
	}
	return 0;
}

static void dram_row(const char *name, uint64_t b, uint32_t n)
{
	const double MiB = 1024.0 * 1024.0;
	printf("  %-34s %12.1f MiB", name, (double)b / MiB);
	if (n > 1)
		printf("  %12.2f GiB", (double)b * n / (MiB * 1024.0));
	printf("\n");
}

int qs_cmd_dram(int argc, char **argv)
{
	struct dram_opts o;
	struct qs_engine_conf ec;
	uint64_t qlc, map_limit = 0;
	if (dram_parse(argc, argv, &o))
		return dram_usage(stderr);
	if (dram_conf(&o, &ec, &qlc))
		return 1;
	uint64_t fast = o.fast ? o.fast
			       : QS_FMT_LOG_START * QS_BLOCK_SIZE + o.log +
					 qs_engine_conf_map_bytes(&ec, qlc);
	struct qs_engine_mem m;
	int rc = qs_engine_dram_plan(&ec, fast, qlc, &m, &map_limit);
	if (rc == -ENOSPC) {
		fprintf(stderr, "qlcshape dram: a fast device of %llu bytes is too small for the log "
				"(and log placement's map region of %llu bytes)\n",
			(unsigned long long)fast,
			(unsigned long long)qs_engine_conf_map_bytes(&ec, qlc));
		return 1;
	}
	if (rc == -ENOMEM) {
		struct qs_conf_err why;
		qs_engine_conf_check_dram(&ec, fast, qlc, &why);
		fprintf(stderr, "qlcshape dram: %s\n", why.msg);
		return 1;
	}
	bool log = ec.placement == QS_PLACE_LOG;
	printf("engine DRAM: QLC %llu bytes (client %llu), fast device %llu bytes, %s placement, "
	       "IU %u\n", (unsigned long long)qlc,
	       (unsigned long long)qs_engine_conf_client_size(&ec, qlc), (unsigned long long)fast,
	       qs_placement_name(ec.placement), ec.iu_bytes);
	if (o.instances > 1) {
		char n[32];
		snprintf(n, sizeof(n), "%u instances", o.instances);
		printf("  %-34s %16s  %16s\n", "", "one instance", n);
	}
	struct qs_engine_conf split;
	qs_engine_dram_split(&ec, fast, qlc, &split);
	dram_row("log index", m.index, o.instances);
	dram_row(split.dirty_ius_max ? "dirty-IU records (fixed)" : "dirty-IU records (pool at open)",
		 m.dirty, o.instances);
	if (log) {
		dram_row("map pages", m.map_pages, o.instances);
		dram_row("per map page", m.map_meta, o.instances);
		dram_row("per QLC block", m.qlc_blocks, o.instances);
		dram_row("bands", m.bands, o.instances);
	}
	dram_row("buffers and the rest", m.other, o.instances);
	dram_row("total", m.total, o.instances);
	if (log)
		printf("map_dram_limit %llu bytes%s\n", (unsigned long long)map_limit,
		       split.dram_limit ? " (what dram_limit leaves)" : "");
	if (split.log_window_blocks)
		printf("log in use at most %llu bytes (the window dram_limit leaves the index)\n",
		       (unsigned long long)(split.log_window_blocks * QS_BLOCK_SIZE));
	if (split.dirty_ius_max)
		printf("dirty IUs at most %llu (writes wait for destage there)\n",
		       (unsigned long long)split.dirty_ius_max);
	if (split.dram_limit)
		printf("dram_limit %llu bytes%s: %.1f%% used\n", (unsigned long long)split.dram_limit,
		       ec.dram_limit == QS_CONF_DRAM_AUTO ? " (the default for this drive)" : "",
		       100.0 * (double)m.total / (double)split.dram_limit);
	return 0;
}
