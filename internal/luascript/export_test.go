package luascript

import "strings"

// Script is one script Load built, for the checks of every script.
type Script struct {
	Files  []string
	Source string
	// Body is Source without the prelude and the constants' header.
	Body   string
	Consts Consts
	Codes  Codes
}

// Loaded returns every script Load has built in this test binary.
func Loaded() []Script {
	loadedMu.Lock()
	defer loadedMu.Unlock()
	out := make([]Script, len(loaded))
	for i, s := range loaded {
		out[i] = Script{Files: s.files, Source: s.source,
			Body: strings.TrimPrefix(s.source, prelude+"\n"+s.consts.header()), Consts: s.consts, Codes: s.codes}
	}
	return out
}
