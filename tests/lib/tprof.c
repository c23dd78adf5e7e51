/* SPDX-License-Identifier: MIT */
/* Tiny drive profiles for the bench tests; see tprof.h. */
#include <stdio.h>
#include <string.h>

#include "tprof.h"

const char tprof_tiny_qlc[] =
	"[drive]\n"
	"name = tinyqlc\n"
	"media = nand\n"
	"capacity_gb = 1\n"
	"iu_kib = 64\n"
	"op_pct = 7\n"
	"channels = 2\n"
	"dies_per_channel = 2\n"
	"unit_ius = 4\n"
	"t_read_us = 100\n"
	"t_prog_us = 2000\n"
	"channel_mbps = 800\n"
	"link_read_mbps = 7000\n"
	"link_write_mbps = 7000\n"
	"ctrl_units = 1\n"
	"ctrl_ns = 1000\n"
	"write_buffer_mib = 8\n"
	"plp = 1\n";

const char tprof_tiny_scm[] =
	"[drive]\n"
	"name = tinyscm\n"
	"media = scm\n"
	"capacity_gb = 1\n"
	"iu_kib = 4\n"
	"op_pct = 0\n"
	"channels = 4\n"
	"dies_per_channel = 1\n"
	"unit_ius = 1\n"
	"t_read_us = 3\n"
	"t_prog_us = 5\n"
	"channel_mbps = 20000\n"
	"link_read_mbps = 7000\n"
	"link_write_mbps = 6000\n"
	"ctrl_units = 1\n"
	"ctrl_ns = 1300\n"
	"write_buffer_mib = 0\n"
	"plp = 1\n";

void tprof_small_qlc(struct qs_profile *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->media = QS_MEDIA_NAND;
	p->capacity_bytes = 256ull << 20;
	p->iu_bytes = 64u << 10;
	p->op_pct = 10;
	p->channels = 4;
	p->dies_per_channel = 2;
	p->unit_ius = 4;
	p->superblocks = 64;
	p->gc_free_low = 3;
	p->t_read_ns = 100000;
	p->t_prog_ns = 2000000;
	p->t_erase_ns = 5000000;
	p->block_units = 4;
	p->channel_mbps = 800;
	p->link_read_mbps = 7000;
	p->link_write_mbps = 7000;
	p->ctrl_units = 2;
	p->ctrl_ns = 2000;
	p->write_buffer_bytes = 16ull << 20;
	p->plp = 1;
}
