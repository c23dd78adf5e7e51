/* SPDX-License-Identifier: MIT */
/*
 * Subcommands of the qlcshape tool. Each takes the arguments after its own
 * name (argv[0] is the subcommand name), returns the process exit status
 * (0 ok, 1 failure, 2 usage error) and prints its own errors.
 */
#ifndef QS_BENCH_CMDS_H
#define QS_BENCH_CMDS_H

int qs_cmd_bench_engine(int argc, char **argv);
int qs_cmd_bench_calibrate(int argc, char **argv);
int qs_cmd_bench_run(int argc, char **argv);   /* bench/run_cmd.c */
int qs_cmd_bench_ab(int argc, char **argv);
int qs_cmd_bench_curve(int argc, char **argv);
int qs_cmd_bench_trace_export(int argc, char **argv); /* bench/trace_export.c */
int qs_cmd_stats(int argc, char **argv);  /* bench/ctl_cmd.c: a running daemon */
int qs_cmd_policy(int argc, char **argv);
int qs_cmd_drain(int argc, char **argv);
int qs_cmd_dram(int argc, char **argv);	  /* bench/dram_cmd.c: sizing, no daemon */

#endif
