#!/usr/bin/env node
// Entry point of the `keel` command: runs the compiled CLI shipped in dist/.
import '../dist/cli/main.js';
