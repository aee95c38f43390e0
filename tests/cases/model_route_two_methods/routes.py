def pick(names, ctx, failed):
    return names[0]
