/* SPDX-License-Identifier: MIT */
/*
 * Fuzz harness: the daemon's configuration reader (include/host/config.c).
 * The input is the whole file. A refusal must name the file and hold no
 * control bytes; an accepted file goes through everything the daemon does
 * with one before it touches a device: the engine configuration it gives
 * (qs_config_engine_conf, qs_engine_conf_check, qs_config_check_engine over
 * a QLC of 1 TiB) and the --format-only check.
 */
#include <stdio.h>
#include <string.h>

#include "fz_msg.h"
#include "host/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fz_file(data, size, ".ini");
	struct qs_config c;
	struct qs_engine_conf conf;
	struct qs_conf_err ce;
	char err[1024] = "";
	int rc;

	rc = qs_config_load(&c, path, err, sizeof(err));
	fz_check_err("qs_config_load", rc, err, path);
	if (rc < 0)
		return 0;
	qs_engine_conf_default(&conf);
	qs_config_engine_conf(&c, &conf);
	if (qs_engine_conf_check(&conf, &ce) < 0 && !ce.msg[0])
		fz_fail("qs_engine_conf_check refused with an empty message");
	err[0] = 0;
	rc = qs_config_check_engine(&c, &conf, 1ull << 40, 1ull << 36, err, sizeof(err));
	fz_check_err("qs_config_check_engine", rc, err, NULL);
	err[0] = 0;
	rc = qs_config_check_format_only(&c, err, sizeof(err));
	fz_check_err("qs_config_check_format_only", rc, err, NULL);
	qs_config_free(&c);
	return 0;
}
