import lrc.predict as P
import fallback, merged

TODAY = None  # set by evalpred: Predictor.cycle as the code has it


def base():
    pass


def tail():
    P.Predictor.cycle = TODAY

def recent8():
    P.Predictor.cycle = fallback.make(8, False, True)

def recent4():
    P.Predictor.cycle = fallback.make(4, False, True)

def rec8_2():
    P.Predictor.cycle = fallback.make2(8, 2)

def rec16_2():
    P.Predictor.cycle = fallback.make2(16, 2)

def rec4_2():
    P.Predictor.cycle = fallback.make2(4, 2)

def rec8_1():
    P.Predictor.cycle = fallback.make2(8, 1)

def d8():
    P.Predictor.cycle = fallback.make3(8, 2, True, False)

def k8():
    P.Predictor.cycle = fallback.make3(8, 2, False, True)

def dk8():
    P.Predictor.cycle = fallback.make3(8, 2, True, True)
