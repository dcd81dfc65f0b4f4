# -*- Python -*-
# The GoogleTest unit tests, run through lit so one command counts them all.

import os

import lit.formats

config.name = "Tandem-Unit"
config.suffixes = []
config.test_source_root = os.path.join(config.tandem_obj_root, "unittests")
config.test_exec_root = config.test_source_root
config.test_format = lit.formats.GoogleTest(".", "Tests")
