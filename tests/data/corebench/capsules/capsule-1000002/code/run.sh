#!/usr/bin/env bash
set -e
Rscript analysis.R
