def make_search(**kwargs):
    return None


class Audit:
    pass
