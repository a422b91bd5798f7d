#include <TestSerial_Category.hpp>
#include <TestWidened.hpp>
