class Audit:
    def __init__(self, level=0):
        self.level = level


class Count:
    pass


def deny_refunds(tool, args, tool_context):
    return {"error": "refunds need a person"} if tool.name == "refund" else None


def allow_all(tool, args, tool_context):
    return None
