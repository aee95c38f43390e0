from tools_mod import *
