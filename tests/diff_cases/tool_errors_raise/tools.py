def search(q: str) -> str:
    '''Search.'''
    return q


def wipe() -> str:
    '''Wipe.'''
    return 'wiped'
