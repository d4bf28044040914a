def run():
    return 0
