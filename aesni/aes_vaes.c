/* SPDX-License-Identifier: MIT */
/* aes_vaes.c - placeholder while the VAES kernels are written. */
#include "aes_internal.h"
const struct ct_aes_kernels ct_aes_kernels_vaes;
