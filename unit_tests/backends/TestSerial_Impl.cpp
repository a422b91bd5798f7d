#include <TestSerial_Category.hpp>
#include <TestImpl.hpp>
