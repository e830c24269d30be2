// SPDX-License-Identifier: MIT
//
// go_aes.go - AES-128-GCM over 16 KiB messages for a given time, in Go's crypto/aes and
// crypto/cipher: crypto the hooks cannot see (it never calls libcrypto), which the CPU profile
// must name by its Go function (the profile suite builds it with `go build -ldflags=-s`, so the
// names come from the pclntab alone; tests/profile/profile.py).
// usage: go_aes SECONDS; prints "sealed N bytes".
package main

import (
	"crypto/aes"
	"crypto/cipher"
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	seconds := 1.0
	if len(os.Args) > 1 {
		if s, err := strconv.ParseFloat(os.Args[1], 64); err == nil {
			seconds = s
		}
	}
	key := []byte("go_aes key, not!") // 16 bytes: AES-128, a fixed test key
	block, err := aes.NewCipher(key)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	nonce := make([]byte, gcm.NonceSize())
	msg := make([]byte, 16384)
	out := make([]byte, 0, len(msg)+gcm.Overhead())
	total := 0
	for end := time.Now().Add(time.Duration(seconds * float64(time.Second))); time.Now().Before(end); {
		for i := 0; i < 64; i++ {
			nonce[0]++
			out = gcm.Seal(out[:0], nonce, msg, nil)
			total += len(msg)
		}
	}
	fmt.Printf("sealed %d bytes\n", total)
}
