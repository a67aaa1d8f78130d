#!/usr/bin/env node
import '../dist/fake-agent/cli.js';
