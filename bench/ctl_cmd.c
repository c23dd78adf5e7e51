/* SPDX-License-Identifier: MIT */
/*
 * qlcshape stats | policy set | drain: talk to a running qlcshaped through
 * its control socket (protocol in include/host/ctl.h). The socket is found
 * in the instance's config file (daemon.control_socket), or given directly.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host/config.h"
#include "host/ctl.h"
#include "cmds.h"

struct ctl_opts {
	const char *config, *socket;
	int format; /* 0 text, 1 json, 2 prometheus, 3 state */
};

static int ctl_usage(const char *cmd, FILE *f)
{
	if (!strcmp(cmd, "stats"))
		fprintf(f, "usage: qlcshape stats (--config FILE | --socket PATH) [--json | --prometheus |\n"
			   "       --state]\n"
			   "  Statistics of a running qlcshaped: client I/O, cache fill, log space,\n"
			   "  destage, whole-IU share, read-fill, errors. --json: one JSON object;\n"
			   "  --prometheus: the Prometheus text format (node_exporter textfile ready);\n"
			   "  --state: the engine's internal state on one line (queues, waiters, log\n"
			   "  positions; for a bug report when a drain or a request does not end).\n");
	else if (!strcmp(cmd, "policy"))
		fprintf(f, "usage: qlcshape policy set NAME [KEY=VALUE...] (--config FILE | --socket PATH)\n"
			   "  Switch the destage policy of a running qlcshaped. NAME: fifo, sweep,\n"
			   "  fullest; keys: partial (fill|hold), hold_ms, start_pct, urgent_pct,\n"
			   "  idle_ms, max_age_ms, pace_pct.\n");
	else
		fprintf(f, "usage: qlcshape drain (--config FILE | --socket PATH)\n"
			   "  Destage everything a running qlcshaped holds; returns when done.\n");
	fprintf(f, "  --config FILE  the instance's config (its daemon.control_socket)\n"
		   "  --socket PATH  the control socket itself\n");
	return f == stdout ? 0 : 2;
}

/* Parse options; the remaining words are left in argv[optind..]. */
static int ctl_parse(const char *cmd, int argc, char **argv, struct ctl_opts *o)
{
	static const struct option opts[] = {
		{"config", required_argument, NULL, 'c'},
		{"socket", required_argument, NULL, 'S'},
		{"json", no_argument, NULL, 'j'},
		{"prometheus", no_argument, NULL, 'P'},
		{"state", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case 'S':
			o->socket = optarg;
			break;
		case 'j':
		case 'P':
		case 's': {
			const char *name = c == 'j' ? "json" : c == 'P' ? "prometheus" : "state";
			if (strcmp(cmd, "stats")) {
				fprintf(stderr, "qlcshape %s: --%s is an option of stats only\n", cmd,
					name);
				return 2;
			}
			if (o->format) {
				fprintf(stderr, "qlcshape stats: give one of --json, --prometheus and "
						"--state\n");
				return 2;
			}
			o->format = c == 'j' ? 1 : c == 'P' ? 2 : 3;
			break;
		}
		case 'h':
			return ctl_usage(cmd, stdout) ? 2 : 1;
		default:
			return ctl_usage(cmd, stderr);
		}
	}
	if (!o->config == !o->socket) {
		fprintf(stderr, "qlcshape %s: give either --config FILE or --socket PATH\n", cmd);
		return 2;
	}
	return 0;
}

/* Send request; print the body; exit status 0 (ok) or 1. */
static int ctl_send(const char *cmd, const struct ctl_opts *o, const char *request)
{
	struct qs_config cfg;
	const char *path = o->socket;
	char err[512];
	int ret;

	if (o->config) {
		ret = qs_config_load(&cfg, o->config, err, sizeof(err));
		if (ret) {
			fprintf(stderr, "qlcshape %s: %s\n", cmd, err);
			return 2;
		}
		path = cfg.control_socket;
	}
	char *reply = malloc(QS_CTL_MAX_REPLY);
	if (!reply) {
		ret = 1;
		goto out;
	}
	/* drain answers when it is done: no time limit; the others 10 s */
	ret = qs_ctl_call(path, request, reply, QS_CTL_MAX_REPLY, strcmp(cmd, "drain") ? 10000 : 0);
	if (ret < 0)
		fprintf(stderr, "qlcshape %s: %s\n", cmd, reply);
	else if (ret == 0)
		fputs(reply[2] == '\n' ? reply + 3 : "", stdout);
	else
		fprintf(stderr, "qlcshape %s: daemon says: %s\n", cmd, reply);
	free(reply);
	ret = ret == 0 ? 0 : 1;
out:
	if (o->config)
		qs_config_free(&cfg);
	return ret;
}

int qs_cmd_stats(int argc, char **argv)
{
	struct ctl_opts o;
	int ret = ctl_parse("stats", argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (optind != argc)
		return ctl_usage("stats", stderr);
	static const char *const req[] = {"stats", "stats json", "stats prometheus", "stats state"};
	return ctl_send("stats", &o, req[o.format]);
}

int qs_cmd_policy(int argc, char **argv)
{
	struct ctl_opts o;
	char request[QS_CTL_MAX_REQUEST];
	size_t n;
	int ret = ctl_parse("policy", argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (argc - optind < 2 || strcmp(argv[optind], "set"))
		return ctl_usage("policy", stderr);
	n = (size_t)snprintf(request, sizeof(request), "policy set");
	for (int i = optind + 1; i < argc && n < sizeof(request); i++)
		n += (size_t)snprintf(request + n, sizeof(request) - n, " %s", argv[i]);
	if (n >= sizeof(request)) {
		fprintf(stderr, "qlcshape policy: the request is longer than %d bytes\n",
			QS_CTL_MAX_REQUEST - 1);
		return 2;
	}
	return ctl_send("policy", &o, request);
}

int qs_cmd_drain(int argc, char **argv)
{
	struct ctl_opts o;
	int ret = ctl_parse("drain", argc, argv, &o);

	if (ret)
		return ret == 1 ? 0 : ret;
	if (optind != argc)
		return ctl_usage("drain", stderr);
	return ctl_send("drain", &o, "drain");
}
