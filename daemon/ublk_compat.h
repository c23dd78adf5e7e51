/* SPDX-License-Identifier: MIT */
/*
 * ublk UAPI definitions newer than Debian 12's <linux/ublk_cmd.h> (which is
 * Linux 6.1's). Each block states the kernel release whose
 * include/uapi/linux/ublk_cmd.h introduced it; values are the ABI and are
 * written out here, not copied code. Everything is guarded so a newer system
 * header wins.
 */
#ifndef QS_UBLK_COMPAT_H
#define QS_UBLK_COMPAT_H

#include <linux/ioctl.h>
#include <linux/ublk_cmd.h>

/*
 * Linux 6.4/6.5: ioctl-encoded command opcodes (type 'u', number = the
 * legacy opcode, size = the command struct). Kernels that know them answer
 * UBLK_U_CMD_GET_FEATURES; 6.1 rejects any of them (ENODEV or EOPNOTSUPP),
 * which is how the daemon tells the two apart. struct ublksrv_ctrl_cmd is
 * 32 bytes and struct ublksrv_io_cmd 16 bytes in every release.
 */
#ifndef UBLK_U_CMD_GET_FEATURES
#define UBLK_CMD_GET_DEV_INFO2 0x12
#define UBLK_CMD_GET_FEATURES 0x13
#define UBLK_U_CMD_GET_QUEUE_AFFINITY \
	_IOR('u', UBLK_CMD_GET_QUEUE_AFFINITY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_DEV_INFO _IOR('u', UBLK_CMD_GET_DEV_INFO, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_ADD_DEV _IOWR('u', UBLK_CMD_ADD_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_DEL_DEV _IOWR('u', UBLK_CMD_DEL_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_DEV _IOWR('u', UBLK_CMD_START_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_STOP_DEV _IOWR('u', UBLK_CMD_STOP_DEV, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_SET_PARAMS _IOWR('u', UBLK_CMD_SET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_PARAMS _IOR('u', UBLK_CMD_GET_PARAMS, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_START_USER_RECOVERY \
	_IOWR('u', UBLK_CMD_START_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_END_USER_RECOVERY \
	_IOWR('u', UBLK_CMD_END_USER_RECOVERY, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_DEV_INFO2 _IOR('u', UBLK_CMD_GET_DEV_INFO2, struct ublksrv_ctrl_cmd)
#define UBLK_U_CMD_GET_FEATURES _IOR('u', UBLK_CMD_GET_FEATURES, struct ublksrv_ctrl_cmd)
#define UBLK_U_IO_FETCH_REQ _IOWR('u', UBLK_IO_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_COMMIT_AND_FETCH_REQ \
	_IOWR('u', UBLK_IO_COMMIT_AND_FETCH_REQ, struct ublksrv_io_cmd)
#define UBLK_U_IO_NEED_GET_DATA _IOWR('u', UBLK_IO_NEED_GET_DATA, struct ublksrv_io_cmd)
#endif

/* Linux 6.2: unprivileged devices. */
#ifndef UBLK_F_UNPRIVILEGED_DEV
#define UBLK_F_UNPRIVILEGED_DEV (1ULL << 5)
#endif

/* Linux 6.4: the server issues ioctl-encoded io commands (UBLK_U_IO_*). */
#ifndef UBLK_F_CMD_IOCTL_ENCODE
#define UBLK_F_CMD_IOCTL_ENCODE (1ULL << 6)
#endif

/* Linux 6.5: data copied with pread/pwrite on /dev/ublkcN. */
#ifndef UBLK_F_USER_COPY
#define UBLK_F_USER_COPY (1ULL << 7)
#endif

/* Linux 6.6: zoned devices. */
#ifndef UBLK_F_ZONED
#define UBLK_F_ZONED (1ULL << 8)
#endif

/* Linux 6.1 knows these flags (listed for the feature log). */
#define QS_UBLK_F_KNOWN_61                                                         \
	(UBLK_F_SUPPORT_ZERO_COPY | UBLK_F_URING_CMD_COMP_IN_TASK | UBLK_F_NEED_GET_DATA | \
	 UBLK_F_USER_RECOVERY | UBLK_F_USER_RECOVERY_REISSUE)

#endif
