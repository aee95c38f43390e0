from tools_mod import *  # noqa: F403 - the test: a star import binds any name
