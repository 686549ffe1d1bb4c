#!/bin/bash
echo goodbye > /app/hello.txt
