/* SPDX-License-Identifier: MIT */
/* boringssl_plugin.h - what boringssl_host asks of boringssl_plugin: the seals' count and size. */
#ifndef BORINGSSL_PLUGIN_H
#define BORINGSSL_PLUGIN_H

#define PLUGIN_SEALS 25
#define PLUGIN_LEN 600

/* Seals PLUGIN_SEALS messages; returns how many succeeded, -1 when no context could be made. */
int plugin_seal(void);

#endif
