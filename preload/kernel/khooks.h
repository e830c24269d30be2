/* SPDX-License-Identifier: MIT */
/*
 * khooks.h - what the kernel hook files (fd bookkeeping, cryptodev, AF_ALG) call in each other.
 */
#ifndef CT_KHOOKS_H
#define CT_KHOOKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h> /* glibc's __TIMESIZE */

#include "kfd.h"

/* 32-bit glibc (2.34 on): a program built with _TIME_BITS=64 calls __ioctl_time64,
 * __fcntl_time64, __setsockopt64, __sendmsg64 and __recvmsg64 instead of ioctl, fcntl,
 * setsockopt, sendmsg and recvmsg (their time_t-carrying requests and control messages differ).
 * Each is hooked beside its twin and passes an untracked call to its own real function. */
#if defined(__GLIBC__) && defined(__TIMESIZE) /* nested: elsewhere __GLIBC_PREREQ does not parse */
#if __TIMESIZE == 32 && __GLIBC_PREREQ(2, 34)
#define CT_TIME64_HOOKS 1
#endif
#endif

/* The last descriptor of a tracked file was closed (close, dup2 over it, close_range...):
 * finish its life cycle (AF_ALG op fd: teardown timing; cryptodev: forget its sessions) and
 * free the state. close_ns is the close call's own duration (0 when not known). */
void ct_kernel_closed(int fd, struct ct_kfd_state *st, uint64_t close_ns);

void ct_afalg_closed(struct ct_thread *t, struct ct_kfd_state *st, uint64_t close_ns);
void ct_cdev_closed(struct ct_thread *t, struct ct_kfd_state *st);

/* Attaches the current call site to a new path once (the stack walk is not free: skip it when
 * this path already has one). */
void ct_kernel_path_callsite(uint32_t path_id);

/* Interns a kernel path (CT_NO_PATH when the table is full), marked nested when an EVP call is
 * driving the interface, and attaches its call site. */
uint32_t ct_kernel_path_intern(struct ct_thread *t, struct ct_path_key *key);

/* "family=AF_ALG type=SOCK_SEQPACKET|SOCK_CLOEXEC"-style socket type. */
const char *ct_sock_type_name(int type, char *buf, size_t cap);

#endif
