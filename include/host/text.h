/* SPDX-License-Identifier: MIT */
/*
 * qs_text: file content made fit for a message. A loader's error quotes
 * what the file holds, and the file could hold anything: control bytes
 * (an escape sequence would reach the user's terminal), DEL, invalid UTF-8.
 */
#ifndef QS_HOST_TEXT_H
#define QS_HOST_TEXT_H

#include <stddef.h>

/*
 * Copy src into dst (n bytes, NUL-terminated; n >= 8) with control bytes,
 * DEL and bytes that are not valid UTF-8 written as \xNN; a src that does
 * not fit ends in "...". Returns dst. Any thread.
 */
const char *qs_text_vis(char *dst, size_t n, const char *src);

/*
 * Rewrite the message in msg (a buffer of size bytes) the same way in
 * place, newlines kept (a message may have several lines); what no longer
 * fits is cut, ending in "...". For a loader's public function to call on
 * its error message before returning it. Any thread.
 */
void qs_text_vis_msg(char *msg, size_t size);

#endif
