#!/usr/bin/env bash
set -e
python3 main.py
